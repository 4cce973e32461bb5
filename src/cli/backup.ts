import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_DATA_DIR } from "../config/load.ts";
import { openDatabase } from "../db/database.ts";
import { dataDirPaths } from "../server/datadir.ts";
import { parseArgs, UsageError } from "./args.ts";

/**
 * `gengate backup FILE`: a consistent copy of the live database (VACUUM INTO), safe while the
 * server runs. Secrets are not included: copy server.secret and admin.token separately.
 */
export function backupCommand(argv: string[]): number {
  const { flags, positionals } = parseArgs(argv, { values: ["data-dir"], booleans: ["json"] });
  if (positionals.length !== 1) throw new UsageError("backup needs exactly one FILE argument");
  const target = resolve(positionals[0]!);
  if (existsSync(target)) throw new UsageError(`backup target ${target} already exists`);
  const paths = dataDirPaths(flags["data-dir"] ?? process.env.GENGATE_DATA_DIR ?? DEFAULT_DATA_DIR);
  if (!existsSync(paths.database)) throw new UsageError(`no database at ${paths.database}`);
  const db = openDatabase(paths.database, { create: false });
  try {
    db.query("VACUUM INTO ?").run(target);
  } finally {
    db.close();
  }
  if (flags.json) process.stdout.write(`${JSON.stringify({ backup: target })}\n`);
  else process.stdout.write(`backup written to ${target}\n`);
  return 0;
}
