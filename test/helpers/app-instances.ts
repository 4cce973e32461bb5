import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app/app.ts";
import { createAppContext } from "../../src/app/app-context.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import type { Bus } from "../../src/db/bus.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { migratePostgres } from "../../src/db/migrate-postgres.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";
import type { AppContext } from "../../src/server/context.ts";
import { closeAppContext, testContextOptions } from "./context.ts";
import { createTestDatabase } from "./postgres.ts";

/**
 * Several in-process gengate apps ("instances") on ONE database, each with its own `Sql` and its
 * own bus, leadership and cache invalidation, as separate servers would have them. PostgreSQL: a
 * pool, LISTEN/NOTIFY and advisory locks each. SQLite: connections to one file, each with an
 * in-process bus that hears nobody else (the poll is then the only way across).
 */
export interface AppInstance {
  ctx: AppContext;
  /** A request to this instance, with the shared default key unless `key` says otherwise. */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

export interface AppInstances {
  dialect: Dialect;
  /** The default account's first key (made by the first instance). */
  key: string;
  accountId: string;
  keyId: string;
  /** Another instance on the database; `bus` replaces the one the settings name. */
  add(options?: { bus?: Bus; config?: ConfigFile }): Promise<AppInstance>;
  close(): Promise<void>;
}

export async function openAppInstances(
  dialect: Dialect,
  config: ConfigFile = { models: [], catalog: { sandbox: true } } as unknown as ConfigFile,
): Promise<AppInstances & { first: AppInstance }> {
  const closers: (() => Promise<void> | void)[] = [];
  let openSql: () => { sql: Sql; sqlite: ReturnType<typeof openDatabase> | null; close: () => Promise<void> };
  let database: { kind: "sqlite" } | { kind: "postgres"; url: string; password: null };
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "gengate-apps-"));
    const file = join(dir, "gengate.db");
    const first = openDatabase(file);
    migrate(first);
    first.close();
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    database = { kind: "sqlite" };
    openSql = () => {
      const db = openDatabase(file);
      const sql = new SqliteSql(db);
      return {
        sql,
        sqlite: db,
        close: async () => {
          sql.close();
          db.close();
        },
      };
    };
  } else {
    const created = await createTestDatabase();
    const migrator = PostgresSql.connect({ url: created.url, password: null });
    await migratePostgres(migrator);
    await migrator.close();
    closers.push(() => created.drop());
    database = { kind: "postgres", url: created.url, password: null };
    openSql = () => {
      const sql = PostgresSql.connect({ url: created.url, password: null, maxConnections: 4 });
      return { sql, sqlite: null, close: () => sql.close() };
    };
  }
  let defaults: { key: string; accountId: string; keyId: string } | null = null;
  const add = async (options: { bus?: Bus; config?: ConfigFile } = {}): Promise<AppInstance> => {
    const opened = openSql();
    const base = testContextOptions(options.config ?? config);
    const created = await createAppContext({
      ...base,
      settings: { ...base.settings, database },
      sql: opened.sql,
      sqlite: opened.sqlite,
      bus: options.bus,
      version: "0.0.0-test",
    });
    const { ctx, defaultKey } = created;
    if (defaultKey) {
      defaults = { key: defaultKey.key, accountId: defaultKey.account.id, keyId: defaultKey.keyId };
    }
    closers.unshift(async () => {
      await closeAppContext(created);
      await opened.close();
    });
    const app = createApp(ctx);
    return {
      ctx,
      request: (path, init = {}) => {
        const headers = new Headers(init.headers);
        const k = init.key === undefined ? defaults!.key : init.key;
        if (k) headers.set("authorization", `Key ${k}`);
        return app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
      },
    };
  };
  const first = await add();
  const d = defaults!;
  return {
    dialect,
    first,
    key: d.key,
    accountId: d.accountId,
    keyId: d.keyId,
    add,
    close: async () => {
      for (const close of closers.splice(0)) await close();
    },
  };
}
