import { Database } from "bun:sqlite";
import { nowSeconds } from "../lib/time.ts";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations.ts";
import type { Sql } from "./sql.ts";

export class SchemaTooNewError extends Error {}

/**
 * Opens the ledger database with the settings every caller needs (docs/operations.md "Database durability"):
 * strict bindings, safe 64-bit integers, WAL, a busy timeout so the server and operator
 * commands can write at the same time, and foreign keys.
 */
export function openDatabase(path: string, options: { create?: boolean } = {}): Database {
  const db = new Database(path, { strict: true, safeIntegers: true, create: options.create ?? true });
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  // FULL: every commit syncs the WAL, so an acknowledged write survives power loss (an operator
  // command's top-up, a migration). The server's SqliteSql turns its own connection to NORMAL and
  // syncs the WAL itself after each write, off the event loop, with the same guarantee
  // (src/db/wal-sync.ts, docs/decisions.md "Durable commits").
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  // Statement journals of savepoints (every group-committed submit and chat reservation) stay in
  // memory: the default created, wrote and unlinked a file in /var/tmp per transaction (strace).
  db.exec("PRAGMA temp_store = MEMORY");
  // A checkpoint runs inside the COMMIT that crosses this many WAL frames: it writes every page the
  // frames changed into the database (one pwrite per distinct page) and fsyncs the WAL and the
  // database, stalling that request. The same hot pages (accounts, keys, index roots) change in
  // nearly every transaction, so a longer interval writes each of them once for more transactions:
  // at 2000 pages (SQLite's default is 1000) strace counted fewer main-thread pwrites per chat call,
  // and alternating bench rounds against 500 gave submits/s +7-13%, chat +1-6%, chat added p50 at
  // one connection -0.05 ms, p99 unchanged; at one connection the calls slowed by 1.5-2.5 ms (a
  // checkpoint) fell from about 3% to 1% (docs/performance.md). The WAL file stays at up to ~8 MB.
  db.exec("PRAGMA wal_autocheckpoint = 2000");
  return db;
}

export function currentSchemaVersion(db: Database): number {
  const table = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!table) return 0;
  const row = db.query("SELECT max(version) AS v FROM schema_migrations").get() as { v: bigint | null };
  return row.v === null ? 0 : Number(row.v);
}

/** Applies every pending migration; refuses a database written by a newer gengate. Returns versions applied. */
export function migrate(db: Database): number[] {
  const current = currentSchemaVersion(db);
  if (current > LATEST_SCHEMA_VERSION) {
    throw new SchemaTooNewError(
      `database schema version ${current} is newer than this gengate supports (${LATEST_SCHEMA_VERSION}); upgrade gengate`,
    );
  }
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
      );
      db.exec(m.sql);
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        nowSeconds(),
      );
    }).immediate();
    applied.push(m.version);
  }
  return applied;
}

/** Readiness: the database answers and every migration this binary knows is applied. */
export function databaseReady(db: Database): { ok: boolean; schema_version: number; detail?: string } {
  try {
    const v = currentSchemaVersion(db);
    return v === LATEST_SCHEMA_VERSION
      ? { ok: true, schema_version: v }
      : { ok: false, schema_version: v, detail: `schema ${v}, expected ${LATEST_SCHEMA_VERSION}` };
  } catch (err) {
    return { ok: false, schema_version: -1, detail: err instanceof Error ? err.message : String(err) };
  }
}

/** Readiness over the `Sql` port (either dialect): the database answers and its schema is current. */
export async function sqlReady(sql: Sql): Promise<{ ok: boolean; schema_version: number; detail?: string }> {
  try {
    const row = await sql.get<{ v: bigint | null }>("SELECT max(version) AS v FROM schema_migrations");
    const v = Number(row?.v ?? 0n);
    return v === LATEST_SCHEMA_VERSION
      ? { ok: true, schema_version: v }
      : { ok: false, schema_version: v, detail: `schema ${v}, expected ${LATEST_SCHEMA_VERSION}` };
  } catch (err) {
    return { ok: false, schema_version: -1, detail: err instanceof Error ? err.message : String(err) };
  }
}
