import type { DatabaseSettings } from "../config/schema.ts";
import { migrate, openDatabase } from "./database.ts";
import { migratePostgres } from "./migrate-postgres.ts";
import type { Sql } from "./sql.ts";
import { PostgresSql } from "./sql-postgres.ts";
import { SqliteSql } from "./sql-sqlite.ts";

export interface OpenedSql {
  sql: Sql;
  close(): Promise<void>;
}

/**
 * The `Sql` that database_url names, with its dialect's migrations applied: the SQLite file at
 * `sqlitePath` (the data dir's), or the PostgreSQL database (migrated under the advisory lock).
 * Not used by the server until the stores are converted (docs/scale-out.md "Status").
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
  return { sql: pg, close: () => pg.close() };
}
