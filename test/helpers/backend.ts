import { type Sql, SqlConstraintError, type SqlParam } from "../../src/db/sql.ts";

/**
 * Which database the tests of this process run on: `GENGATE_TEST_BACKEND=postgres` puts in-process
 * apps (test/helpers/context.ts) and black-box servers (test/helpers/server.ts) on PostgreSQL, a
 * fresh database each; otherwise SQLite. Tests meant for both backends read and write through the
 * `Sql` port (`ctx.sql`, `openServerSql`); assertions that only mean something on SQLite (the file,
 * PRAGMAs, query plans, backup/restore) are skipped on PostgreSQL with `sqliteOnly`.
 */
export const onPostgres = process.env.GENGATE_TEST_BACKEND === "postgres";

/**
 * A test title that says why the test is skipped on PostgreSQL; use with `test.skipIf(onPostgres)`
 * (or `describe.skipIf`), so a PostgreSQL run lists the skip and its reason.
 */
export function sqliteOnly(title: string, reason: string): string {
  return onPostgres ? `${title} [SQLite only: ${reason}]` : title;
}

/** `SELECT count(*) FROM <from>` through the port (`from`: a table and an optional WHERE). */
export async function countRows(sql: Sql, from: string, params: readonly SqlParam[] = []): Promise<number> {
  const row = await sql.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${from}`, params);
  return Number(row!.n);
}

/** The kind of constraint that refused `write` (SqlConstraintError, either backend), or "none". */
export async function constraintKind(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (e) {
    if (e instanceof SqlConstraintError) return e.kind;
    throw e;
  }
  return "none";
}

/** The names of gengate's tables (without the migrations' bookkeeping), through the port. */
export async function tableNames(sql: Sql): Promise<string[]> {
  const rows =
    sql.dialect === "postgres"
      ? await sql.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
        )
      : await sql.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1",
        );
  return rows.map((r) => r.name);
}

/** Why the backup and restore tests are SQLite-only. */
export const BACKUP_IS_SQLITE =
  "backup and restore copy the SQLite data dir; on PostgreSQL they refuse to run (test/server/database-url.blackbox.test.ts)";

/** The open-jobs counter of a key (api_keys.open_jobs) or of a person (people.open_jobs, the studio's). */
export async function openJobs(sql: Sql, who: { keyId: string } | { personId: string }): Promise<number> {
  const [table, id] = "keyId" in who ? ["api_keys", who.keyId] : ["people", who.personId];
  const row = await sql.get<{ n: bigint }>(`SELECT open_jobs AS n FROM ${table} WHERE id = ?`, [id]);
  return Number(row?.n ?? 0n);
}
