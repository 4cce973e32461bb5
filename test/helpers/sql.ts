import type { Database } from "bun:sqlite";
import { openDatabase } from "../../src/db/database.ts";
import { MIGRATIONS } from "../../src/db/migrations.ts";
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

/**
 * An in-memory database as a gengate of schema `version` left it: its migrations up to that one
 * applied and recorded, as `migrate` does, so a test can add the rows of that time and then migrate.
 */
export function databaseAtVersion(version: number): Database {
  const db = openDatabase(":memory:");
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
  );
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sql);
    db.query("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(m.version, m.name);
  }
  return db;
}
