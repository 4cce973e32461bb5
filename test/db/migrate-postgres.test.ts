import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SchemaTooNewError } from "../../src/db/database.ts";
import {
  migratePostgres,
  PG_LATEST_SCHEMA_VERSION,
  PG_MIGRATIONS,
  postgresSchemaVersion,
} from "../../src/db/migrate-postgres.ts";
import type { Sql } from "../../src/db/sql.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { createTestDatabase, dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

const pgOnly = dialects().filter((d) => d === "postgres");

describe.each(pgOnly)("PostgreSQL migrations (%s)", () => {
  test("instances starting together apply each migration once (advisory lock)", async () => {
    const db = await createTestDatabase();
    const pools = [0, 1, 2].map(() => PostgresSql.connect({ url: db.url, password: null }));
    try {
      const results = await Promise.all(pools.map((p) => migratePostgres(p)));
      const versions = PG_MIGRATIONS.map((m) => m.version);
      expect(results.flat().sort((a, b) => a - b)).toEqual(versions);
      const rows = await pools[0]!.all<{ version: bigint }>(
        "SELECT version FROM schema_migrations ORDER BY version",
      );
      expect(rows).toEqual(versions.map((v) => ({ version: BigInt(v) })));
      expect(await migratePostgres(pools[1]!)).toEqual([]);
      expect(await postgresSchemaVersion(pools[2]!)).toBe(PG_LATEST_SCHEMA_VERSION);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
      await db.drop();
    }
  });

  test("a database written by a newer gengate is refused, and an empty one reports version 0", async () => {
    const t = await openTestSql("postgres");
    try {
      const pg = t.sql as PostgresSql;
      expect(await postgresSchemaVersion(pg)).toBe(0);
      await migratePostgres(pg);
      await pg.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
      await expect(migratePostgres(pg)).rejects.toBeInstanceOf(SchemaTooNewError);
    } finally {
      await t.close();
    }
  });

  test("a failing migration leaves nothing behind (DDL is transactional)", async () => {
    const t = await openTestSql("postgres");
    try {
      const pg = t.sql as PostgresSql;
      // Occupy a name the baseline creates: the baseline fails, and its other tables are not left over.
      await pg.run("CREATE TABLE mail_outbox (x BIGINT)");
      await expect(migratePostgres(pg)).rejects.toThrow(/already exists/);
      expect(await pg.get("SELECT to_regclass('accounts')::text AS t")).toEqual({ t: null });
      expect(await postgresSchemaVersion(pg)).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe.each(dialects())("storage_usage triggers on %s", (dialect) => {
  let t: TestSql;
  let sql: Sql;
  beforeAll(async () => {
    t = await openTestSql(dialect, { migrated: true });
    sql = t.sql;
  });
  afterAll(async () => {
    await t?.close();
  });

  const usage = () => sql.all("SELECT kind, bytes FROM storage_usage ORDER BY kind");

  test("follow file and output rows as SQLite's triggers do", async () => {
    await sql.run("INSERT INTO accounts (id, name, currency, created_at) VALUES ('acc_1', 'a', 'USD', 0)");
    const file = (id: string, size: number, deleted: number | null) =>
      sql.run(
        `INSERT INTO files (id, account_id, content_type, size, sha256, path, created_at, expires_at, deleted_at)
         VALUES (?, 'acc_1', 'image/png', ?, 'x', 'p', 0, 1, ?)`,
        [id, size, deleted],
      );
    await file("file_a", 10, null);
    await file("file_b", 7, 5); // inserted already deleted: not counted
    await sql.run(
      `INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at)
       VALUES ('job_1', 0, 'p', 'image/png', 5, 'x', 0, 1), ('job_1', 1, 'p', 'image/png', 6, 'x', 0, 1)`,
    );
    expect(await usage()).toEqual([
      { kind: "outputs", bytes: 11n },
      { kind: "uploads", bytes: 10n },
    ]);
    await sql.run("UPDATE files SET deleted_at = 9 WHERE id = 'file_a'");
    await sql.run("UPDATE files SET deleted_at = 10 WHERE id = 'file_a'"); // already deleted: no change
    await sql.run("DELETE FROM job_outputs WHERE idx = 0");
    expect(await usage()).toEqual([
      { kind: "outputs", bytes: 6n },
      { kind: "uploads", bytes: 0n },
    ]);
    await sql.run("DELETE FROM files"); // deleted rows were subtracted once already
    expect(await usage()).toEqual([
      { kind: "outputs", bytes: 6n },
      { kind: "uploads", bytes: 0n },
    ]);
  });
});
