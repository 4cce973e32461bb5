/**
 * The two ways `gengate migrate-data` stops (src/backup/migrate-data.ts), in a module of their own
 * so that its parts (tables, files, verification) throw them without importing the command.
 */

/** Refused before anything was written: the message says what to change. */
export class MigrateRefused extends Error {}

/** Stopped during or after the copy: a step failed, or verification found `problems`. */
export class MigrateFailed extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}
