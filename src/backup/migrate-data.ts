import { Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, linkSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { currentSchemaVersion, migrate, openDatabase } from "../db/database.ts";
import { migratePostgres, PG_LATEST_SCHEMA_VERSION, postgresSchemaVersion } from "../db/migrate-postgres.ts";
import { LATEST_SCHEMA_VERSION } from "../db/migrations.ts";
import type { Sql, SqlParam } from "../db/sql.ts";
import { PostgresSql } from "../db/sql-postgres.ts";
import { SqliteSql } from "../db/sql-sqlite.ts";
import type { BlobStore } from "../files/blobs.ts";
import { LocalBlobStore } from "../files/blobs-local.ts";
import { dataDirPaths } from "../server/datadir.ts";

/**
 * `gengate migrate-data`: copies a STOPPED single-box data dir (its SQLite file and its stored
 * files) into an EMPTY PostgreSQL database and S3 bucket prefix, then verifies the copy before it
 * says done (docs/scale-out.md "Moving a single box over").
 *
 * - Rows are copied raw, table by table in foreign-key order, over the `Sql` port (no stores), in
 *   batches, ids and timestamps kept; all tables in ONE PostgreSQL transaction, so an interrupted
 *   run leaves the database empty. Identity sequences are then moved past the copied ids.
 * - Files are copied through the BlobStore port (before the rows), each SHA-256 checked against its
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
 */

export class MigrateRefused extends Error {}

export class MigrateFailed extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

export interface MigrateOptions {
  dataDir: string;
  /** The target database (password kept apart from the URL, never printed). */
  target: { url: string; password: string | null };
  /** Where the source keeps its files (the data dir's files/, or its bucket). */
  sourceBlobs: BlobStore;
  /** Where the files go; null (or the source's own store): they stay where they are. */
  targetBlobs: BlobStore | null;
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

/** Recorded by each side's own migrations, compared as a version, never copied. */
const SKIPPED = new Set(["schema_migrations"]);

interface Table {
  name: string;
  columns: string[];
  pk: string[];
  deps: string[];
  /** The digest of the rows a fresh schema's migrations put in it (storage_usage's zeros), else null. */
  seed: string | null;
}

interface StoredFile {
  path: string;
  size: bigint;
  sha256: string;
  content_type: string;
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

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

/** The source's tables (but schema_migrations) in foreign-key order, seeded tables last. */
async function sourceTables(sql: Sql): Promise<Table[]> {
  const names = await sql.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  );
  const byName = new Map<string, Table>();
  for (const { name } of names) {
    if (SKIPPED.has(name)) continue;
    const cols = await sql.all<{ name: string; pk: bigint }>(
      "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid",
      [name],
    );
    const fks = await sql.all<{ table: string }>('SELECT "table" FROM pragma_foreign_key_list(?)', [name]);
    byName.set(name, {
      name,
      columns: cols.map((c) => c.name),
      pk: cols
        .filter((c) => c.pk > 0n)
        .sort((a, b) => Number(a.pk - b.pk))
        .map((c) => c.name),
      deps: [...new Set(fks.map((f) => f.table))].filter((t) => t !== name),
      seed: null,
    });
  }
  // The rows a fresh schema holds, from the same migrations in memory: such a table in the target
  // is still "empty" when it holds just these; the copy replaces them with the source's.
  const fresh = openDatabase(":memory:");
  const freshSql = new SqliteSql(fresh);
  try {
    migrate(fresh);
    for (const t of byName.values())
      if ((await count(freshSql, t.name)) > 0) t.seed = (await tableDigest(freshSql, t)).sha256;
  } finally {
    freshSql.close();
    fresh.close();
  }
  // A seeded table nothing references (storage_usage, kept by triggers on files and outputs) is copied
  // last, over what the triggers summed while the other tables were copied.
  const referenced = new Set([...byName.values()].flatMap((t) => t.deps));
  const last = (t: Table) => t.seed !== null && !referenced.has(t.name);
  const ordered: Table[] = [];
  const done = new Set<string>();
  const visit = (t: Table, path: string[]) => {
    if (done.has(t.name)) return;
    if (path.includes(t.name))
      throw new Error(`foreign keys form a cycle: ${[...path, t.name].join(" -> ")}`);
    for (const d of t.deps) {
      const dep = byName.get(d);
      if (dep) visit(dep, [...path, t.name]);
    }
    done.add(t.name);
    ordered.push(t);
  };
  for (const t of byName.values()) if (!last(t)) visit(t, []);
  for (const t of byName.values()) if (last(t)) visit(t, []);
  return ordered;
}

/** The target's tables must have the source's columns, in the same order. */
async function checkColumns(pg: Sql, tables: Table[]): Promise<void> {
  for (const t of tables) {
    const cols = await pg.all<{ c: string }>(
      "SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
      [t.name],
    );
    const got = cols.map((c) => c.c).join(",");
    if (got !== t.columns.join(","))
      throw new MigrateRefused(
        `table ${t.name} differs between the data dir (${t.columns.join(", ")}) and the target (${got || "absent"})`,
      );
  }
}

async function count(sql: Sql, table: string): Promise<number> {
  const row = await sql.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${q(table)}`);
  return Number(row?.n ?? 0n);
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

/** Refuses a database that holds anything but an empty gengate schema (of a version this binary knows). */
async function checkTargetEmpty(pg: PostgresSql, tables: Table[]): Promise<void> {
  const present = (
    await pg.all<{ t: string }>(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
  ).map((r) => r.t);
  if (present.length === 0) return;
  const known = new Set([...tables.map((t) => t.name), ...SKIPPED]);
  const foreign = present.filter((t) => !known.has(t));
  if (!present.includes("schema_migrations") || foreign.length)
    throw new MigrateRefused(
      `the target database is not empty: it holds tables that are not gengate's (${(foreign.length ? foreign : present).slice(0, 5).join(", ")}); give an empty database`,
    );
  const v = await postgresSchemaVersion(pg);
  if (v > PG_LATEST_SCHEMA_VERSION)
    throw new MigrateRefused(
      `the target database's schema version ${v} is newer than this gengate knows (${PG_LATEST_SCHEMA_VERSION})`,
    );
  for (const t of tables) {
    if (!present.includes(t.name)) continue;
    const filled = t.seed
      ? (await tableDigest(pg, t)).sha256 !== t.seed
      : (await pg.get(`SELECT 1 AS x FROM ${q(t.name)} LIMIT 1`)) !== null;
    if (filled)
      throw new MigrateRefused(
        `the target database is not empty: table ${t.name} has rows (a finished copy? check it with --verify-only; else give an empty database)`,
      );
  }
}

/** Referenced files absent from the store or of another size than their row says. */
async function missingFiles(blobs: BlobStore, files: StoredFile[]): Promise<string[]> {
  const out: string[] = [];
  await pool(files, 8, async (f) => {
    const size = await blobs.size(f.path);
    if (size === null) out.push(`${f.path} (missing)`);
    else if (size !== Number(f.size)) out.push(`${f.path} (${size} bytes, its row says ${f.size})`);
  });
  return out.sort();
}

/**
 * The objects already under the target prefix: only keys this copy would write are allowed (left by
 * an interrupted run); they are checked byte for byte (SHA-256) and kept. Anything else is refused.
 */
async function targetObjects(blobs: BlobStore, files: StoredFile[]): Promise<Map<string, number>> {
  const wanted = new Map(files.map((f) => [f.path, f]));
  const present = new Map<string, number>();
  const foreign: string[] = [];
  for await (const o of blobs.list("")) {
    if (wanted.has(o.key)) present.set(o.key, o.size);
    else foreign.push(o.key);
  }
  if (foreign.length)
    throw new MigrateRefused(
      `the target bucket prefix ${blobs.location} is not empty (${foreign.length} objects gengate would not write, e.g. ${foreign[0]}); give an empty prefix`,
    );
  const differ: string[] = [];
  await pool([...present.keys()], 4, async (key) => {
    const f = wanted.get(key)!;
    if (present.get(key) !== Number(f.size) || (await sha256Of(blobs.stream(key))) !== f.sha256)
      differ.push(key);
  });
  if (differ.length)
    throw new MigrateRefused(
      `the target bucket prefix ${blobs.location} holds ${differ.length} objects under gengate's keys with other bytes (e.g. ${differ[0]}); give an empty prefix`,
    );
  return present;
}

async function copyFiles(
  from: BlobStore,
  to: BlobStore,
  files: StoredFile[],
  present: Map<string, number>,
  concurrency: number,
  say: (line: string) => void,
): Promise<void> {
  const todo = files.filter((f) => !present.has(f.path));
  const total = todo.reduce((n, f) => n + Number(f.size), 0);
  let done = 0;
  let bytes = 0;
  let last = 0;
  await pool(todo, concurrency, async (f) => {
    const tmp = to.tempPath(f.path);
    let sha: string;
    try {
      sha = await spool(from, f.path, tmp);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    if (sha !== f.sha256) {
      rmSync(tmp, { force: true });
      throw new MigrateFailed(
        `${f.path} in ${from.location} does not match its row's SHA-256 (the source is damaged)`,
      );
    }
    await to.commit(tmp, f.path, f.content_type);
    done++;
    bytes += Number(f.size);
    if (performance.now() - last > 1000 || done === todo.length) {
      last = performance.now();
      say(`files: ${done}/${todo.length} (${mb(bytes)} of ${mb(total)} MB)`);
    }
  });
}

/**
 * Puts `key`'s bytes at the local path `tmp` and returns their SHA-256: a hard link to the source
 * file when both are local (no copy), else a streamed copy.
 */
async function spool(from: BlobStore, key: string, tmp: string): Promise<string> {
  if (from instanceof LocalBlobStore) {
    const path = join(from.root, key);
    try {
      linkSync(path, tmp);
    } catch {
      copyFileSync(path, tmp);
    }
    return sha256Of(from.stream(key));
  }
  const hash = new Bun.CryptoHasher("sha256");
  const fd = openSync(tmp, "w", 0o600);
  try {
    for await (const chunk of from.stream(key)) {
      hash.update(chunk);
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/** Every table's rows in one PostgreSQL transaction, then the identity sequences past the copied ids. */
async function copyRows(
  src: Sql,
  pg: PostgresSql,
  tables: Table[],
  batchRows: number,
  say: (line: string) => void,
): Promise<void> {
  await pg.tx(async (tx) => {
    for (const t of tables) {
      if (t.seed) await tx.run(`DELETE FROM ${q(t.name)}`);
      const per = Math.max(1, Math.min(batchRows, Math.floor(30_000 / t.columns.length)));
      const cols = t.columns.map(q).join(", ");
      const row = `(${t.columns.map(() => "?").join(", ")})`;
      let n = 0;
      let last = performance.now();
      for await (const page of batches(src, t, per)) {
        for (const batch of bySize(page, t.columns)) {
          const params: SqlParam[] = [];
          for (const r of batch) for (const c of t.columns) params.push(r[c] as SqlParam);
          try {
            await tx.run(
              `INSERT INTO ${q(t.name)} (${cols}) VALUES ${Array.from({ length: batch.length }, () => row).join(", ")}`,
              params,
            );
          } catch (err) {
            throw new MigrateFailed(
              `table ${t.name}: PostgreSQL refused rows ${n + 1}-${n + batch.length} (${(err as Error).message}); nothing was committed`,
            );
          }
          n += batch.length;
        }
        if (performance.now() - last > 1000) {
          last = performance.now();
          say(`rows: ${t.name} ${n}`);
        }
      }
      say(`rows: ${t.name} ${n} copied`);
    }
    const identities = await tx.all<{ t: string; c: string }>(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'",
    );
    for (const { t, c } of identities) {
      await tx.get(
        `SELECT setval(pg_get_serial_sequence(?, ?), m) AS v FROM (SELECT max(${q(c)}) AS m FROM ${q(t)}) x WHERE m IS NOT NULL`,
        [q(t), c],
      );
    }
  });
}

/** Bytes of text and blobs per INSERT, at most (a page of large job inputs is split into several). */
const INSERT_BYTES = 4 * 1024 * 1024;

/** A page of rows cut into runs of at most INSERT_BYTES of text and blobs (at least one row each). */
export function* bySize(
  rows: Record<string, unknown>[],
  columns: string[],
): Generator<Record<string, unknown>[]> {
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    let size = 0;
    for (const c of columns) {
      const v = rows[i]![c];
      if (typeof v === "string") size += v.length;
      else if (v instanceof Uint8Array) size += v.byteLength;
    }
    if (i > start && bytes + size > INSERT_BYTES) {
      yield rows.slice(start, i);
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start < rows.length) yield rows.slice(start);
}

/**
 * A table's rows in batches, in primary-key order (keyset pages; the same statement in both
 * dialects, whose orders agree: TEXT is COLLATE "C" in PostgreSQL, bytes as in SQLite). A table
 * without a primary key is read in the order of all its columns, by offset.
 */
async function* batches(sql: Sql, t: Table, size: number): AsyncGenerator<Record<string, unknown>[]> {
  const cols = t.columns.map(q).join(", ");
  if (t.pk.length === 0) {
    const order = t.columns.map(q).join(", ");
    for (let offset = 0; ; offset += size) {
      const rows = await sql.all<Record<string, unknown>>(
        `SELECT ${cols} FROM ${q(t.name)} ORDER BY ${order} LIMIT ${size} OFFSET ${offset}`,
      );
      if (rows.length) yield rows;
      if (rows.length < size) return;
    }
  }
  const key = t.pk.length === 1 ? q(t.pk[0]!) : `(${t.pk.map(q).join(", ")})`;
  const marks = t.pk.length === 1 ? "?" : `(${t.pk.map(() => "?").join(", ")})`;
  const order = t.pk.map(q).join(", ");
  let after: SqlParam[] | null = null;
  for (;;) {
    const rows: Record<string, unknown>[] = await sql.all<Record<string, unknown>>(
      `SELECT ${cols} FROM ${q(t.name)}${after ? ` WHERE ${key} > ${marks}` : ""} ORDER BY ${order} LIMIT ${size}`,
      after ?? [],
    );
    if (rows.length) yield rows;
    if (rows.length < size) return;
    const lastRow = rows[rows.length - 1]!;
    after = t.pk.map((c) => lastRow[c] as SqlParam);
  }
}

/** One canonical text per value, the same whichever dialect read it (the port's types). */
function encode(v: unknown): string {
  if (v === null || v === undefined) return "n";
  if (typeof v === "bigint") return `i${v}`;
  if (typeof v === "string") return `s${v.length}:${v}`;
  if (v instanceof Uint8Array) return `b${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}`;
  return `f${String(v)}`;
}

/** A table's row count and the SHA-256 of all its rows in key order. */
async function tableDigest(sql: Sql, t: Table): Promise<{ rows: number; sha256: string }> {
  const hash = new Bun.CryptoHasher("sha256");
  let rows = 0;
  for await (const batch of batches(sql, t, 2000)) {
    for (const r of batch) {
      let line = "";
      for (const c of t.columns) line += `${encode(r[c])}|`;
      hash.update(`${line}\n`);
    }
    rows += batch.length;
  }
  return { rows, sha256: hash.digest("hex") };
}

interface AccountMoney {
  id: string;
  balance_micro: bigint;
  held_micro: bigint;
  ledger_balance: bigint;
  ledger_held: bigint;
  open_holds: bigint;
}

interface Money {
  accounts: AccountMoney[];
  keys: { id: string; held_micro: bigint; open_holds: bigint }[];
}

/** Every account's and key's money as its row says and as the ledger and holds add up. */
async function money(sql: Sql): Promise<Money> {
  const accounts = await sql.all<AccountMoney>(
    `SELECT a.id, a.balance_micro, a.held_micro,
       COALESCE((SELECT sum(l.balance_delta_micro) FROM ledger_entries l WHERE l.account_id = a.id), 0) AS ledger_balance,
       COALESCE((SELECT sum(l.held_delta_micro) FROM ledger_entries l WHERE l.account_id = a.id), 0) AS ledger_held,
       COALESCE((SELECT sum(h.amount_micro) FROM holds h WHERE h.account_id = a.id AND h.status = 'open'), 0) AS open_holds
     FROM accounts a ORDER BY a.id`,
  );
  const keys = await sql.all<{ id: string; held_micro: bigint; open_holds: bigint }>(
    `SELECT k.id, k.held_micro,
       COALESCE((SELECT sum(h.amount_micro) FROM holds h WHERE h.key_id = k.id AND h.status = 'open'), 0) AS open_holds
     FROM api_keys k ORDER BY k.id`,
  );
  return { accounts, keys };
}

function moneyProblems(side: string, m: Money): string[] {
  const out: string[] = [];
  for (const a of m.accounts) {
    if (a.balance_micro !== a.ledger_balance)
      out.push(
        `${side}: account ${a.id} balance ${a.balance_micro} != its ledger entries' sum ${a.ledger_balance}`,
      );
    if (a.held_micro !== a.ledger_held)
      out.push(
        `${side}: account ${a.id} held ${a.held_micro} != its ledger entries' held sum ${a.ledger_held}`,
      );
    if (a.held_micro !== a.open_holds)
      out.push(`${side}: account ${a.id} held ${a.held_micro} != its open holds ${a.open_holds}`);
  }
  for (const k of m.keys)
    if (k.held_micro !== k.open_holds)
      out.push(`${side}: key ${k.id} held ${k.held_micro} != its open holds ${k.open_holds}`);
  return out;
}

/** Every difference between the data dir and the target; empty when the copy is exact. */
async function verify(
  src: Sql,
  pg: Sql,
  tables: Table[],
  files: StoredFile[],
  fromBlobs: BlobStore,
  toBlobs: BlobStore | null,
  say: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  for (const t of tables) {
    const [a, b] = await Promise.all([tableDigest(src, t), tableDigest(pg, t)]);
    if (a.rows !== b.rows)
      problems.push(`table ${t.name}: ${a.rows} rows in the data dir, ${b.rows} in the target`);
    else if (a.sha256 !== b.sha256) problems.push(`table ${t.name}: the rows differ (same count, ${a.rows})`);
  }
  say(`verified ${tables.length} tables`);
  const [ms, mt] = await Promise.all([money(src), money(pg)]);
  problems.push(...moneyProblems("data dir", ms), ...moneyProblems("target", mt));
  const byId = new Map(mt.accounts.map((a) => [a.id, a]));
  for (const a of ms.accounts) {
    const b = byId.get(a.id);
    if (!b) problems.push(`account ${a.id} is missing from the target`);
    else if (a.balance_micro !== b.balance_micro || a.held_micro !== b.held_micro)
      problems.push(
        `account ${a.id}: balance/held ${a.balance_micro}/${a.held_micro} in the data dir, ${b.balance_micro}/${b.held_micro} in the target`,
      );
  }
  if (mt.accounts.length !== ms.accounts.length)
    problems.push(`${ms.accounts.length} accounts in the data dir, ${mt.accounts.length} in the target`);
  say(`verified the money of ${ms.accounts.length} accounts`);
  let done = 0;
  let last = performance.now();
  await pool(files, 4, async (f) => {
    const [a, b] = await Promise.all([
      sha256Of(fromBlobs.stream(f.path)).catch((e) => `unreadable (${(e as Error).message})`),
      toBlobs ? sha256Of(toBlobs.stream(f.path)).catch((e) => `unreadable (${(e as Error).message})`) : null,
    ]);
    if (a !== f.sha256)
      problems.push(`file ${f.path}: SHA-256 ${a} in the data dir's store, its row says ${f.sha256}`);
    if (b !== null && b !== f.sha256)
      problems.push(`file ${f.path}: SHA-256 ${b} in the target store, its row says ${f.sha256}`);
    done++;
    if (performance.now() - last > 1000) {
      last = performance.now();
      say(`verifying files: ${done}/${files.length}`);
    }
  });
  say(`verified ${files.length} files`);
  return problems;
}

async function sha256Of(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const c of chunks) hash.update(c);
  return hash.digest("hex");
}

/** Runs `fn` over the items, `n` at a time; the first error stops taking new items and is thrown. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  if (failed !== null) throw failed;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
