import { nowSeconds } from "../lib/time.ts";
import { SchemaTooNewError } from "./database.ts";
import type { Migration } from "./migrations.ts";
import base from "./migrations-pg/001_base.sql" with { type: "text" };
import m016 from "./migrations-pg/016_cache_versions.sql" with { type: "text" };
import m017 from "./migrations-pg/017_write_rate.sql" with { type: "text" };
import m018 from "./migrations-pg/018_shared_secrets.sql" with { type: "text" };
import m019 from "./migrations-pg/019_webhook_body.sql" with { type: "text" };
import m020 from "./migrations-pg/020_key_controls.sql" with { type: "text" };
import m021 from "./migrations-pg/021_wallet_statement.sql" with { type: "text" };
import m022 from "./migrations-pg/022_upstream_callbacks.sql" with { type: "text" };
import m023 from "./migrations-pg/023_operators.sql" with { type: "text" };
import m024 from "./migrations-pg/024_job_cost.sql" with { type: "text" };
import m025 from "./migrations-pg/025_job_route.sql" with { type: "text" };
import m026 from "./migrations-pg/026_margins.sql" with { type: "text" };
import m027 from "./migrations-pg/027_usage_daily.sql" with { type: "text" };
import m028 from "./migrations-pg/028_job_stats.sql" with { type: "text" };
import m029 from "./migrations-pg/029_jobs_account_model.sql" with { type: "text" };
import m030 from "./migrations-pg/030_files_deleted_rows.sql" with { type: "text" };
import type { PostgresSql } from "./sql-postgres.ts";

/**
 * PostgreSQL migrations, embedded like SQLite's. Versions are shared with src/db/migrations.ts:
 * the baseline is SQLite's schema after 015 and is recorded as version 15; a later change is one
 * file per dialect with the same number (016_x.sql in both folders). test/db/schema-parity.test.ts
 * fails when the latest versions or the schemas differ. Append only.
 */
export const PG_MIGRATIONS: readonly Migration[] = [
  { version: 15, name: "base (SQLite migrations 001-015)", sql: base },
  { version: 16, name: "cache versions", sql: m016 },
  { version: 17, name: "write-rate windows, jobs.seq identity", sql: m017 },
  { version: 18, name: "shared secrets", sql: m018 },
  { version: 19, name: "webhook body", sql: m019 },
  { version: 20, name: "key controls", sql: m020 },
  { version: 21, name: "wallet statement", sql: m021 },
  { version: 22, name: "upstream callbacks", sql: m022 },
  { version: 23, name: "operators: disabled accounts and people", sql: m023 },
  { version: 24, name: "job cost", sql: m024 },
  { version: 25, name: "job route", sql: m025 },
  { version: 26, name: "margins index", sql: m026 },
  { version: 27, name: "usage rollup", sql: m027 },
  { version: 28, name: "job stats rollup", sql: m028 },
  { version: 29, name: "jobs by account and model", sql: m029 },
  { version: 30, name: "files: no deleted rows", sql: m030 },
];

export const PG_LATEST_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/**
 * Any int8 would do: a constant that names gengate's migration lock among other applications'
 * advisory locks in the same database ("gengate" in ASCII).
 */
export const MIGRATION_LOCK_KEY = 0x67656e67617465n;

/**
 * Applies the pending migrations, one transaction each, every one under the transaction-level
 * advisory lock MIGRATION_LOCK_KEY: instances starting together apply each migration once (the
 * others wait on the lock, then find it recorded). PostgreSQL's DDL is transactional, so a failed
 * migration leaves nothing behind. Refuses a database written by a newer gengate. Returns the
 * versions this call applied.
 */
export async function migratePostgres(pg: PostgresSql): Promise<number[]> {
  const applied: number[] = [];
  for (;;) {
    const version = await pg.tx(async (tx) => {
      await tx.get(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      await (tx as PostgresSql).script(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, applied_at BIGINT NOT NULL)',
      );
      const row = await tx.get<{ v: bigint | null }>("SELECT max(version) AS v FROM schema_migrations");
      const current = row?.v === null || row?.v === undefined ? 0 : Number(row.v);
      if (current > PG_LATEST_SCHEMA_VERSION) {
        throw new SchemaTooNewError(
          `database schema version ${current} is newer than this gengate supports (${PG_LATEST_SCHEMA_VERSION}); upgrade gengate`,
        );
      }
      const next = PG_MIGRATIONS.find((m) => m.version > current);
      if (!next) return null;
      await (tx as PostgresSql).script(next.sql);
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        next.version,
        next.name,
        nowSeconds(),
      ]);
      return next.version;
    });
    if (version === null) return applied;
    applied.push(version);
  }
}

/** The recorded schema version (0 when none); for readiness. */
export async function postgresSchemaVersion(pg: PostgresSql): Promise<number> {
  const t = await pg.get<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!t?.t) return 0;
  const row = await pg.get<{ v: bigint | null }>("SELECT max(version) AS v FROM schema_migrations");
  return row?.v == null ? 0 : Number(row.v);
}
