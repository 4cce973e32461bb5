import type { Database } from "bun:sqlite";
import type { DatabaseSettings } from "../config/schema.ts";
import { migrate, openDatabase } from "./database.ts";
import { migratePostgres } from "./migrate-postgres.ts";
import type { Sql } from "./sql.ts";
import { PostgresSql } from "./sql-postgres.ts";
import { SqliteSql } from "./sql-sqlite.ts";

export interface OpenedSql {
  sql: Sql;
  /** The SQLite connection under `sql` (backup, PRAGMA checks); null on PostgreSQL. */
  sqlite: Database | null;
  close(): Promise<void>;
}

/**
 * The `Sql` that database_url names, with its dialect's migrations applied: the SQLite file at
 * `sqlitePath` (the data dir's), or the PostgreSQL database (migrated under the advisory lock).
 * The server and the operator commands open their database here.
 */
export async function openSql(database: DatabaseSettings, sqlitePath: string): Promise<OpenedSql> {
  if (database.kind === "sqlite") {
    const db = openDatabase(sqlitePath);
    try {
      migrate(db);
    } catch (err) {
      db.close();
      throw err;
    }
    const sql = new SqliteSql(db);
    return {
      sql,
      sqlite: db,
      close: async () => {
        sql.close();
        db.close();
      },
    };
  }
  const pg = PostgresSql.connect({ url: database.url, password: database.password });
  try {
    await migratePostgres(pg);
  } catch (err) {
    await pg.close();
    throw err;
  }
  return { sql: pg, sqlite: null, close: () => pg.close() };
}
