import type { Database } from "bun:sqlite";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";

const executors = new WeakMap<Database, SqliteSql>();

/**
 * The one `Sql` over a test's bun:sqlite connection: every store a test builds over the same
 * connection must share one executor, whose lock keeps other statements out of an open transaction.
 */
/** Makes `sql` the executor `sqlOf(db)` returns (an app's own, so test reads queue behind its transactions). */
export function adoptSql(db: Database, sql: SqliteSql): void {
  executors.set(db, sql);
}

export function sqlOf(db: Database): SqliteSql {
  let sql = executors.get(db);
  if (!sql) {
    sql = new SqliteSql(db);
    executors.set(db, sql);
  }
  return sql;
}
