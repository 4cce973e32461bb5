import m001 from "./migrations/001_foundation.sql" with { type: "text" };
import m002 from "./migrations/002_ledger.sql" with { type: "text" };
import m003 from "./migrations/003_queue.sql" with { type: "text" };
import m004 from "./migrations/004_webhooks.sql" with { type: "text" };
import m005 from "./migrations/005_key_counters.sql" with { type: "text" };
import m006 from "./migrations/006_files.sql" with { type: "text" };
import m007 from "./migrations/007_sweep_indexes.sql" with { type: "text" };
import m008 from "./migrations/008_storage_usage.sql" with { type: "text" };
import m009 from "./migrations/009_people.sql" with { type: "text" };
import m010 from "./migrations/010_console_reads.sql" with { type: "text" };
import m011 from "./migrations/011_topup_source.sql" with { type: "text" };
import m012 from "./migrations/012_redeem_codes.sql" with { type: "text" };
import m013 from "./migrations/013_payments.sql" with { type: "text" };
import m014 from "./migrations/014_alerts_mail.sql" with { type: "text" };
import m015 from "./migrations/015_studio.sql" with { type: "text" };
import m016 from "./migrations/016_cache_versions.sql" with { type: "text" };
import m017 from "./migrations/017_write_rate.sql" with { type: "text" };
import m018 from "./migrations/018_shared_secrets.sql" with { type: "text" };
import m019 from "./migrations/019_webhook_body.sql" with { type: "text" };
import m020 from "./migrations/020_key_controls.sql" with { type: "text" };
import m021 from "./migrations/021_wallet_statement.sql" with { type: "text" };
import m022 from "./migrations/022_upstream_callbacks.sql" with { type: "text" };
import m023 from "./migrations/023_operators.sql" with { type: "text" };
import m024 from "./migrations/024_job_cost.sql" with { type: "text" };
import m025 from "./migrations/025_job_route.sql" with { type: "text" };
import m026 from "./migrations/026_margins.sql" with { type: "text" };
import m027 from "./migrations/027_usage_daily.sql" with { type: "text" };
import m028 from "./migrations/028_job_stats.sql" with { type: "text" };
import m029 from "./migrations/029_jobs_account_model.sql" with { type: "text" };
import m030 from "./migrations/030_files_deleted_rows.sql" with { type: "text" };

/**
 * Migrations are embedded in the binary (imported as text) and applied in order, each in its own
 * transaction together with its row in schema_migrations. Append only: never edit a released one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "foundation", sql: m001 },
  { version: 2, name: "ledger", sql: m002 },
  { version: 3, name: "queue", sql: m003 },
  { version: 4, name: "webhooks", sql: m004 },
  { version: 5, name: "key counters", sql: m005 },
  { version: 6, name: "files", sql: m006 },
  { version: 7, name: "sweep indexes", sql: m007 },
  { version: 8, name: "storage usage", sql: m008 },
  { version: 9, name: "people", sql: m009 },
  { version: 10, name: "console reads", sql: m010 },
  { version: 11, name: "topup source", sql: m011 },
  { version: 12, name: "redeem codes", sql: m012 },
  { version: 13, name: "payments", sql: m013 },
  { version: 14, name: "alerts and mail", sql: m014 },
  { version: 15, name: "studio", sql: m015 },
  { version: 16, name: "cache versions", sql: m016 },
  { version: 17, name: "write-rate windows", sql: m017 },
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

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
