import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Bus, LocalBus, PostgresBus } from "../../src/db/bus.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { migratePostgres } from "../../src/db/migrate-postgres.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";
import { createTestDatabase } from "./postgres.ts";

/**
 * Several "instances" on ONE migrated database, in this process: each its own `Sql` (its own
 * connection or pool) and its own bus. PostgreSQL: PostgresSql + PostgresBus each, as separate
 * servers would have. SQLite: connections to one file, each with its own LocalBus, which do not
 * talk to each other (like the server and an operator CLI process).
 */
export interface Instance {
  sql: Sql;
  bus: Bus;
}

export interface AddOptions {
  /** PostgreSQL: reach the database at this URL (through a proxy) instead. */
  url?: string;
  connectTimeoutSeconds?: number;
}

export interface Instances {
  dialect: Dialect;
  list: Instance[];
  /** The database URL (PostgreSQL) or file (SQLite). */
  target: string;
  /** Another instance on the same database (closed with the rest). */
  add(options?: AddOptions): Promise<Instance>;
  close(): Promise<void>;
}

export async function openInstances(dialect: Dialect, count: number): Promise<Instances> {
  const closers: (() => Promise<void> | void)[] = [];
  let target: string;
  let add: (options?: AddOptions) => Promise<Instance>;
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "gengate-instances-"));
    target = join(dir, "gengate.db");
    const first = openDatabase(target);
    migrate(first);
    first.close();
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    add = async () => {
      const db = openDatabase(target);
      const sql = new SqliteSql(db);
      const bus = new LocalBus();
      closers.unshift(async () => {
        await bus.close();
        sql.close();
        db.close();
      });
      return { sql, bus };
    };
  } else {
    const database = await createTestDatabase();
    target = database.url;
    const migrator = PostgresSql.connect({ url: target, password: null });
    await migratePostgres(migrator);
    await migrator.close();
    closers.push(() => database.drop());
    add = async (options = {}) => {
      const url = options.url ?? target;
      const sql = PostgresSql.connect({
        url,
        password: null,
        connectTimeoutSeconds: options.connectTimeoutSeconds,
      });
      const bus = new PostgresBus({ settings: { url, password: null }, publisher: sql });
      closers.unshift(async () => {
        await bus.close();
        await sql.close();
      });
      return { sql, bus };
    };
  }
  const list: Instance[] = [];
  for (let i = 0; i < count; i++) list.push(await add());
  return {
    dialect,
    list,
    target,
    add,
    close: async () => {
      for (const close of closers.splice(0)) await close();
    },
  };
}

/** Resolves when `predicate` holds, polling every few ms; rejects after `ms` (a liveness bound). */
export async function until(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await Bun.sleep(2);
  }
}
