import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { currentSchemaVersion } from "../db/database.ts";
import { migratePostgres, PG_LATEST_SCHEMA_VERSION, postgresSchemaVersion } from "../db/migrate-postgres.ts";
import { LATEST_SCHEMA_VERSION } from "../db/migrations.ts";
import { PostgresSql } from "../db/sql-postgres.ts";
import { SqliteSql } from "../db/sql-sqlite.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { dataDirPaths } from "../server/datadir.ts";
import { MigrateFailed, MigrateRefused } from "./migrate-errors.ts";
import { copyFiles, missingFiles, type StoredFile, targetObjects } from "./migrate-files.ts";
import { copyRows, count } from "./migrate-rows.ts";
import { checkColumns, checkTargetEmpty, sourceTables } from "./migrate-tables.ts";
import { money, moneyProblems, verify } from "./migrate-verify.ts";

export { MigrateFailed, MigrateRefused };

/**
 * `gengate migrate-data`: copies a STOPPED single-box data dir (its SQLite file and its stored
 * files) into an EMPTY PostgreSQL database and S3 bucket prefix, then verifies the copy before it
 * says done (docs/scale-out.md "Moving a single box over").
 *
 * - Rows are copied raw, table by table in foreign-key order, over the `Sql` port (no stores), in
 *   batches, ids and timestamps kept; all tables in ONE PostgreSQL transaction, so an interrupted
 *   run leaves the database empty. Identity sequences are then moved past the copied ids.
 * - Files are copied through the BlobBackend port (before the rows), each SHA-256 checked against its
 *   row; objects an interrupted run already wrote are kept when their bytes match (a re-run resumes).
 * - Verification reads both sides again: per table the row count and a SHA-256 over every row in
 *   primary-key order; every account's balance = the sum of its ledger entries and held = its open
 *   holds (and each key's held = its open holds) on both sides, equal between them; every stored
 *   file's SHA-256 on both sides equal to its row's.
 * - Refusals (nothing written): a source in use (a running server holds the database open: the
 *   copy takes SQLite's EXCLUSIVE lock, which fails while another process has it open, and keeps it
 *   until the end, so no server can start on the source meanwhile), a schema version this binary
 *   does not know on either side, a target database with rows or foreign tables, a bucket prefix
 *   with foreign objects, a source whose money does not add up or whose files are missing.
 *
 * This file runs the steps in order; the steps live by concern in migrate-tables.ts (which tables, the
 * target's schema), migrate-rows.ts (reading, copying and digesting rows), migrate-files.ts (stored
 * files) and migrate-verify.ts (money and the final verification).
 */

export interface MigrateOptions {
  dataDir: string;
  /** The target database (password kept apart from the URL, never printed). */
  target: { url: string; password: string | null };
  /** Where the source keeps its files (the data dir's files/, or its bucket). */
  sourceBlobs: BlobBackend;
  /** Where the files go; null (or the source's own store): they stay where they are. */
  targetBlobs: BlobBackend | null;
  mode: "copy" | "dry-run" | "verify";
  /** One line of progress (stderr). */
  progress?: (line: string) => void;
  /** Rows per INSERT (bounded so that rows x columns stays under PostgreSQL's 65535 parameters). */
  batchRows?: number;
  /** Files copied at the same time. */
  fileConcurrency?: number;
}

export interface TableReport {
  table: string;
  rows: number;
}

export interface MigrateReport {
  mode: MigrateOptions["mode"];
  data_dir: string;
  /** The target URL without its password. */
  target: string;
  storage: string;
  /** True when the files were (or would be) copied to another store; false: they stay in place. */
  files_copied: boolean;
  schema_version: number;
  tables: TableReport[];
  rows: number;
  files: number;
  bytes: number;
  /** Objects already in the target bucket with the right bytes (an interrupted run), not copied again. */
  files_already_present: number;
  verified: boolean;
  /** Wall time of the row copy and of the file copy (0 when nothing was copied). */
  rows_ms: number;
  files_ms: number;
  verify_ms: number;
  duration_ms: number;
}

export async function migrateData(options: MigrateOptions): Promise<MigrateReport> {
  const started = performance.now();
  const say = options.progress ?? (() => {});
  const source = openSource(options.dataDir);
  let target: PostgresSql | null = null;
  try {
    const srcSql = source.sql;
    const version = currentSchemaVersion(source.db);
    if (PG_LATEST_SCHEMA_VERSION !== LATEST_SCHEMA_VERSION)
      throw new Error(
        `this gengate's schemas differ (SQLite ${LATEST_SCHEMA_VERSION}, PostgreSQL ${PG_LATEST_SCHEMA_VERSION})`,
      );
    if (version !== LATEST_SCHEMA_VERSION) {
      throw new MigrateRefused(
        version > LATEST_SCHEMA_VERSION
          ? `the data dir's schema version ${version} is newer than this gengate knows (${LATEST_SCHEMA_VERSION}); use the gengate that wrote it`
          : `the data dir's schema version is ${version}, this gengate copies version ${LATEST_SCHEMA_VERSION}: start this gengate once on the data dir (it migrates at start), stop it, then migrate`,
      );
    }
    const tables = await sourceTables(srcSql);
    const files = await srcSql.all<StoredFile>(
      `SELECT path, size, sha256, content_type FROM files WHERE deleted_at IS NULL
       UNION ALL SELECT path, size, sha256, content_type FROM job_outputs ORDER BY path`,
    );
    const moveFiles =
      options.targetBlobs !== null && options.targetBlobs.location !== options.sourceBlobs.location;
    const toBlobs = moveFiles ? options.targetBlobs! : options.sourceBlobs;

    target = PostgresSql.connect({
      url: options.target.url,
      password: options.target.password,
      maxConnections: 2,
    });
    const report: MigrateReport = {
      mode: options.mode,
      data_dir: dataDirPaths(options.dataDir).root,
      target: options.target.url,
      storage: toBlobs.location,
      files_copied: moveFiles,
      schema_version: version,
      tables: [],
      rows: 0,
      files: files.length,
      bytes: files.reduce((n, f) => n + Number(f.size), 0),
      files_already_present: 0,
      verified: false,
      rows_ms: 0,
      files_ms: 0,
      verify_ms: 0,
      duration_ms: 0,
    };

    if (options.mode === "verify") {
      const v = await reach(options.target.url, () => postgresSchemaVersion(target!));
      if (v !== version)
        throw new MigrateRefused(`the target database's schema version is ${v}, the data dir's ${version}`);
      await checkColumns(target, tables);
    } else {
      say("checking the source: money and files");
      const sourceMoney = await money(srcSql);
      const broken = moneyProblems("source", sourceMoney);
      if (broken.length)
        throw new MigrateRefused(
          `the source's ledger does not add up (${broken.length} problems, first: ${broken[0]}); nothing copied`,
        );
      const absent = await missingFiles(options.sourceBlobs, files);
      if (absent.length)
        throw new MigrateRefused(
          `${absent.length} files the source's rows reference are missing or of the wrong size in ${options.sourceBlobs.location} (first: ${absent[0]}); nothing copied`,
        );
      say("checking the target database and bucket");
      await reach(options.target.url, () => checkTargetEmpty(target!, tables));
      const present = moveFiles ? await targetObjects(toBlobs, files) : new Map<string, number>();
      report.files_already_present = present.size;
      for (const t of tables) report.tables.push({ table: t.name, rows: await count(srcSql, t.name) });
      report.rows = report.tables.reduce((n, t) => n + t.rows, 0);
      if (options.mode === "dry-run") {
        report.duration_ms = Math.round(performance.now() - started);
        return report;
      }

      await migratePostgres(target);
      await checkColumns(target, tables);
      if (moveFiles) {
        const t0 = performance.now();
        await copyFiles(options.sourceBlobs, toBlobs, files, present, options.fileConcurrency ?? 4, say);
        report.files_ms = Math.round(performance.now() - t0);
      }
      const t1 = performance.now();
      await copyRows(srcSql, target, tables, options.batchRows ?? 1000, say);
      report.rows_ms = Math.round(performance.now() - t1);
    }

    say("verifying");
    const t2 = performance.now();
    const problems = await verify(
      srcSql,
      target,
      tables,
      files,
      options.sourceBlobs,
      moveFiles ? toBlobs : null,
      say,
    );
    report.verify_ms = Math.round(performance.now() - t2);
    if (options.mode === "verify")
      for (const t of tables) report.tables.push({ table: t.name, rows: await count(srcSql, t.name) });
    report.rows = report.tables.reduce((n, t) => n + t.rows, 0);
    if (problems.length)
      throw new MigrateFailed(
        `verification found ${problems.length} difference${problems.length === 1 ? "" : "s"} between the data dir and the target`,
        problems,
      );
    report.verified = true;
    report.duration_ms = Math.round(performance.now() - started);
    return report;
  } finally {
    await target?.close();
    source.close();
  }
}

/**
 * The source database, locked: SQLite's EXCLUSIVE lock is refused while another process has the
 * database open (a running server holds a shared lock on it all its life), and is held until
 * `close`, so no server or operator command can change the source during the copy.
 */
function openSource(dataDir: string): { db: Database; sql: SqliteSql; close(): void } {
  const path = dataDirPaths(dataDir).database;
  if (!existsSync(path)) throw new MigrateRefused(`no gengate database at ${path} (--data-dir?)`);
  const db = new Database(path, { create: false, readwrite: true, strict: true, safeIntegers: true });
  try {
    db.exec("PRAGMA busy_timeout = 1000");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith("SQLITE_BUSY"))
      throw new MigrateRefused(
        `${path} is in use: stop the gengate server (and any gengate command) running on this data dir first`,
      );
    throw err;
  }
  const sql = new SqliteSql(db);
  return {
    db,
    sql,
    close() {
      try {
        db.exec("ROLLBACK"); // nothing was written: the transaction only held the lock
      } catch {}
      sql.close();
      db.close();
    },
  };
}

/** The first call to the target: a connection failure says which database could not be reached. */
async function reach<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof MigrateRefused) throw err;
    const u = new URL(url);
    throw new MigrateFailed(
      `cannot use the target database ${u.host}${u.pathname}: ${(err as Error).message ?? err}`,
    );
  }
}
