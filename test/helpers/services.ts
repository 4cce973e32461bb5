/**
 * What a unit test builds when it needs no HTTP (docs/architecture.md "Tests"): a migrated database
 * and the services over it, built by the wiring's own factories (`createServices`; testQueueServices
 * adds `createQueueServices`), with a "default" USD account and key as makeTestApp has. No routes, no app
 * context (bus poll, leadership, cache invalidation), no Elysia. Measured on the 2-core machine
 * (best of 3, issue 32): loading this module 63 ms against 146 ms for test/helpers/context.ts (which
 * loads createApp and every route), testServices() 7.2 ms and testQueueServices() 8.9 ms per call
 * against 15.1 ms for makeTestApp().
 *
 * The database is the in-process tests' (testBackend below, also makeTestApp's), so a converted
 * test still runs on both SQLite and PostgreSQL.
 */
import type { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { liveFromConfig } from "../../src/app/app-context.ts";
import { createQueueServices } from "../../src/app/queue-services.ts";
import { createServices } from "../../src/app/services.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import type { Sql } from "../../src/db/sql.ts";
import type { AppContext, QueueServices, Services } from "../../src/server/context.ts";
import "./logs.ts";
import { sqlOf } from "./sql.ts";

/** The public address of test apps and services (makeTestApp's too). */
export const TEST_PUBLIC_URL = "http://gengate.test";
/** The output link signing secret of test apps and services. */
export const TEST_LINK_SECRETS = ["test-secret-test-secret-test-secret"];
/** Cheap argon2id for console passwords in tests (production uses Bun's default cost). */
export const TEST_PASSWORD_COST = { memoryCost: 1024, timeCost: 1 };

/**
 * GENGATE_TEST_BACKEND=postgres runs in-process apps and services on a fresh PostgreSQL database
 * each (test/helpers/postgres.ts; `db` is then null: SQLite-only assertions cannot run); otherwise
 * (no `sql`) an in-memory SQLite database.
 */
export async function testBackend(): Promise<{ sql?: Sql; sqlite?: null }> {
  if (process.env.GENGATE_TEST_BACKEND !== "postgres") return {};
  const { createTestDatabase } = await import("./postgres.ts");
  const { PostgresSql } = await import("../../src/db/sql-postgres.ts");
  const { migratePostgres } = await import("../../src/db/migrate-postgres.ts");
  const database = await createTestDatabase();
  // Two connections: a test file makes many apps, and none is closed before the process ends.
  const sql = PostgresSql.connect({ url: database.url, password: null, maxConnections: 2 });
  await migratePostgres(sql);
  return { sql, sqlite: null };
}

/** What the services are built over: the test's clock (epoch seconds) and configuration. */
export interface TestServicesOptions {
  now?: () => number;
  /** Default as makeTestApp's: no models, the sandbox's on. */
  config?: ConfigFile;
}

/**
 * The domain services over a fresh migrated database, with the "default" account and its key, and
 * the live settings and catalog of the configuration: `ctx.live` is read at each use, as the app's
 * (a test may replace it, as a reload does).
 */
export async function testServices(o: TestServicesOptions = {}) {
  let { sql } = await testBackend();
  let db: Database | null = null;
  if (!sql) {
    db = openDatabase(":memory:");
    migrate(db);
    sql = sqlOf(db);
  }
  const { live, catalog } = liveFromConfig(
    o.config ?? ({ models: [], catalog: { sandbox: true } } as ConfigFile),
  );
  const services: Services = createServices(sql, TEST_PUBLIC_URL, o.now, {
    passwordCost: TEST_PASSWORD_COST,
    console: () => ctx.live.console,
    payments: () => ctx.live.payments,
    smtp: () => ctx.live.smtp,
  });
  const ctx: Services & Pick<AppContext, "live" | "catalog"> = { ...services, live, catalog };
  const { account, keyId, key } = await ctx.accounts.createAccount("default", "USD");
  return { ctx, sql, db, account, keyId, key };
}

/**
 * testServices plus the queue's collaborators (jobs, outputs, files, idempotency, group commit,
 * webhooks, the providers of the configuration) over the same database.
 */
export async function testQueueServices(o: TestServicesOptions = {}) {
  const base = await testServices(o);
  const queue: QueueServices = createQueueServices(base.sql, base.ctx, {
    publicUrl: TEST_PUBLIC_URL,
    baseUrl: `${TEST_PUBLIC_URL}/v1`,
    filesRoot: mkdtempSync(join(tmpdir(), "gengate-files-")),
    linkSecrets: TEST_LINK_SECRETS,
    live: base.ctx.live,
    webhookPolicy: () => ctx.live.webhooks,
  });
  await queue.jobs.whenReady();
  // One object, so replacing `ctx.live` reaches the services' readers above.
  const ctx = Object.assign(base.ctx, queue);
  return { ...base, ctx };
}
