import { MigrateFailed, MigrateRefused, type MigrateReport, migrateData } from "../backup/migrate-data.ts";
import { ConfigError, DEFAULT_DATA_DIR, databaseSettings, readConfigFile } from "../config/load.ts";
import type { ConfigFile, StorageSettings } from "../config/schema.ts";
import { storageSettingsFrom } from "../config/storage.ts";
import { openBlobBackend } from "../files/open-blob-backend.ts";
import { parseArgs, UsageError } from "./args.ts";

/** Exit statuses of `gengate migrate-data` (docs/scale-out.md "Moving a single box over"). */
export const MIGRATE_EXIT = {
  /** Copied and verified (or, with --dry-run, nothing to refuse; with --verify-only, equal). */
  done: 0,
  /** Failed during the copy, or the verification found differences (the message says which). */
  failed: 1,
  /** Bad usage or settings (a missing --to, a URL that is not postgres://, a bad --storage). */
  usage: 2,
  /** Refused before anything was written: source in use, unknown schema, target not empty... */
  refused: 3,
} as const;

export const MIGRATE_USAGE =
  "gengate migrate-data --to postgres://user@host[:port]/db [--storage s3://bucket/prefix] [--data-dir DIR] [--config FILE] [--dry-run | --verify-only] [--json]";

/**
 * `gengate migrate-data`: copies the stopped data dir into an empty PostgreSQL database (and its
 * files into an empty bucket prefix), then verifies. The password (PGPASSWORD,
 * GENGATE_DATABASE_PASSWORD_FILE or the URL) is never printed. Progress goes to stderr, the
 * summary to stdout (one JSON object with --json).
 */
export async function migrateDataCommand(argv: string[]): Promise<number> {
  try {
    return await migrateDataWith(argv);
  } catch (err) {
    // A setting that does not parse (URL, config file, credentials) is bad usage here: exit 2.
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

async function migrateDataWith(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, {
    values: ["to", "storage", "data-dir", "config"],
    booleans: ["dry-run", "verify-only", "json"],
  });
  if (positionals.length) throw new UsageError(`migrate-data takes no arguments (usage: ${MIGRATE_USAGE})`);
  if (!flags.to) throw new UsageError(`migrate-data needs --to (usage: ${MIGRATE_USAGE})`);
  if (flags["dry-run"] && flags["verify-only"])
    throw new UsageError("give --dry-run or --verify-only, not both");
  const env = process.env;
  const database = databaseSettings(
    {
      GENGATE_DATABASE_URL: flags.to,
      PGPASSWORD: env.PGPASSWORD,
      GENGATE_DATABASE_PASSWORD_FILE: env.GENGATE_DATABASE_PASSWORD_FILE,
    },
    null,
  );
  if (database.kind !== "postgres")
    throw new UsageError("--to: give the target PostgreSQL database, postgres://user@host[:port]/db");
  const configPath = flags.config ?? env.GENGATE_CONFIG ?? null;
  const file = configPath ? readConfigFile(configPath) : null;
  const dataDir = flags["data-dir"] ?? env.GENGATE_DATA_DIR ?? file?.server?.data_dir ?? DEFAULT_DATA_DIR;
  const sourceStorage = sourceStorageFrom(env, file);
  let targetStorage: StorageSettings | null = null;
  if (flags.storage !== undefined) {
    const s3 = flags.storage.startsWith("s3://");
    if (s3) targetStorage = storageSettingsFrom({ ...env, GENGATE_STORAGE_URL: flags.storage }, file);
    if (targetStorage?.kind !== "s3")
      throw new UsageError(
        "--storage takes s3://bucket/prefix; leave it out to keep the files where the data dir has them",
      );
  }
  const secret = database.password;
  const clean = (text: string) => (secret ? text.replaceAll(secret, "***") : text);
  const progress = (line: string) => process.stderr.write(`migrate-data: ${clean(line)}\n`);
  const mode = flags["dry-run"] ? "dry-run" : flags["verify-only"] ? "verify" : "copy";
  let report: MigrateReport;
  try {
    report = await migrateData({
      dataDir,
      target: { url: database.url, password: database.password },
      sourceBlobs: openBlobBackend(sourceStorage, dataDir),
      targetBlobs: targetStorage ? openBlobBackend(targetStorage, dataDir) : null,
      mode,
      progress,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MigrateRefused) {
      process.stderr.write(`gengate: migrate-data refused: ${clean(message)}\n`);
      return MIGRATE_EXIT.refused;
    }
    if (err instanceof UsageError || err instanceof ConfigError) throw err;
    process.stderr.write(`gengate: migrate-data failed: ${clean(message)}\n`);
    if (err instanceof MigrateFailed) {
      for (const p of err.problems.slice(0, 50)) process.stderr.write(`  ${clean(p)}\n`);
      if (err.problems.length > 50) process.stderr.write(`  ... and ${err.problems.length - 50} more\n`);
    } else if (env.GENGATE_DEBUG && err instanceof Error)
      process.stderr.write(`${clean(String(err.stack))}\n`);
    if (mode === "copy")
      process.stderr.write(
        "gengate: the data dir is unchanged; see docs/scale-out.md (Moving a single box over) before a re-run\n",
      );
    return MIGRATE_EXIT.failed;
  }
  process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : summary(report));
  return MIGRATE_EXIT.done;
}

/** The data dir's own storage (as its server runs it): storage_url from env or config, else files/. */
function sourceStorageFrom(
  env: Record<string, string | undefined>,
  file: ConfigFile | null,
): StorageSettings {
  const url = env.GENGATE_STORAGE_URL ?? file?.server?.storage_url;
  return url ? storageSettingsFrom(env, file) : { kind: "file" };
}

function summary(r: MigrateReport): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const lines = [
    r.mode === "dry-run"
      ? `dry run: would copy ${r.rows} rows in ${r.tables.length} tables from ${r.data_dir} to ${r.target}`
      : r.mode === "verify"
        ? `verified: ${r.target} holds the same ${r.rows} rows in ${r.tables.length} tables as ${r.data_dir}`
        : `copied and verified ${r.rows} rows in ${r.tables.length} tables from ${r.data_dir} to ${r.target} (rows ${seconds(r.rows_ms)} s)`,
    r.files_copied
      ? `files: ${r.files} (${r.bytes} bytes) ${r.mode === "dry-run" ? "would be copied" : "in"} ${r.storage}${r.files_already_present ? ` (${r.files_already_present} already there from an earlier run)` : ""}${r.files_ms ? ` in ${seconds(r.files_ms)} s` : ""}`
      : `files: ${r.files} (${r.bytes} bytes) stay in ${r.storage}${r.mode === "dry-run" ? "" : " (checked)"}`,
  ];
  if (r.mode !== "dry-run")
    lines.push(`verification took ${seconds(r.verify_ms)} s; total ${seconds(r.duration_ms)} s`);
  for (const t of r.tables) lines.push(`  ${t.table.padEnd(24)} ${t.rows}`);
  return `${lines.join("\n")}\n`;
}
