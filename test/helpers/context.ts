import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app/app.ts";
import { type CreatedAppContext, createAppContext, liveFromConfig } from "../../src/app/app-context.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import type { SqliteSql } from "../../src/db/sql-sqlite.ts";
import type { BlobBackend } from "../../src/files/blob-backend.ts";
import type { PeerSource } from "../../src/http/request-meta.ts";
import { hashSecret } from "../../src/lib/api-keys.ts";
import type { JobRow } from "../../src/queue/job-row.ts";
import { WorkerPool, type WorkerPoolOptions } from "../../src/queue/workers.ts";
import type { AppContext } from "../../src/server/context.ts";
import { pollUntil } from "./api.ts";
import { TEST_LINK_SECRETS, TEST_PASSWORD_COST, TEST_PUBLIC_URL, testBackend } from "./services.ts";
import { adoptSql } from "./sql.ts";

export const ADMIN_TOKEN = "gat_testtesttesttesttesttesttesttesttesttest";

/** Captured log lines (test/helpers/logs.ts, shared with the store-only helper test/helpers/services.ts). */
export { logLines } from "./logs.ts";

/**
 * What createAppContext needs for an in-process test app over `config`: an in-memory database, a
 * temporary files root, fixed secrets and the test admin token.
 */
export function testContextOptions(config: ConfigFile = {} as ConfigFile) {
  return {
    ...liveFromConfig(config),
    settings: {
      host: "127.0.0.1",
      port: 0,
      dataDir: ":memory:",
      publicUrl: TEST_PUBLIC_URL,
      configPath: null,
    },
    publicUrl: TEST_PUBLIC_URL,
    filesRoot: mkdtempSync(join(tmpdir(), "gengate-files-")),
    linkSecrets: TEST_LINK_SECRETS,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    passwordCost: TEST_PASSWORD_COST,
  };
}

/**
 * An in-process gengate on an in-memory database: the real app, routes and services, without
 * a socket. Black-box tests that need a process use startServer() in ./server.ts instead.
 */
export async function makeTestApp(
  options: {
    models?: unknown[];
    sandbox?: boolean;
    now?: () => number;
    providers?: Record<string, unknown>;
    /** Where the bytes go; default a local directory under the temp dir. */
    blobs?: BlobBackend;
    /** The socket addresses requests come from (createApp's `peers`); default none. */
    peers?: PeerSource;
  } = {},
) {
  const { ctx, defaultKey } = await createAppContext({
    ...(await testBackend()),
    ...testContextOptions({
      models: options.models ?? [],
      catalog: { sandbox: options.sandbox ?? true },
      ...(options.providers ? { providers: options.providers as never } : {}),
    } as ConfigFile),
    version: "0.0.0-test",
    now: options.now,
    blobs: options.blobs,
  });
  const db = ctx.sqlite!;
  if (db) {
    adoptSql(db, ctx.sql as SqliteSql);
    // No other connection can open an in-memory database, so its cache_versions poll could never
    // find a change (this app's own changes reach its watchers when announced). Left running, each
    // poll's timer (every 250 ms) kept its app, database and services alive to the end of the run:
    // test/console, test/queue and test/ledger peaked at 544-549 MB with them, 419-462 MB without.
    await ctx.invalidation.stop();
  }
  const { key, account, keyId } = defaultKey!;
  const app = createApp(ctx, options.peers ? { peers: options.peers } : {});
  const request = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    const k = init.key === undefined ? key : init.key;
    if (k) headers.set("authorization", `Key ${k}`);
    return app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
  };
  return { app, ctx, db, key, keyId, account, request };
}

/**
 * Ends what createAppContext started, in the order the server's stop does: long waits, the sweeps'
 * leadership, the cache invalidation poll, the bus. The database is the caller's to close, after
 * this: a poll left running on a closed database logs a warning every 10 s for the rest of the run.
 */
export async function closeAppContext({ ctx, shutdown }: Pick<CreatedAppContext, "ctx" | "shutdown">) {
  shutdown.abort();
  await ctx.leadership.close();
  await ctx.invalidation.stop();
  await ctx.bus.close();
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

type InProcessRequest = (path: string, init?: RequestInit & { key?: string | null }) => Promise<Response>;

/** POST /v1/queue/<model> with `input` through an in-process app; its request id (anything but 202 throws). */
export async function submitQueued(
  app: { request: InProcessRequest; key: string },
  model: string,
  input: Record<string, unknown>,
  key = app.key,
): Promise<string> {
  const res = await app.request(`/v1/queue/${model}`, {
    method: "POST",
    key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  if (res.status !== 202) throw new Error(`submit to ${model}: ${res.status} ${await res.text()}`);
  return (await json(res)).request_id as string;
}

/** The job once it is COMPLETED, FAILED or CANCELLED (polled for up to 20 s). */
export function finalJob(ctx: AppContext, id: string): Promise<JobRow> {
  return pollUntil(
    async () => (await ctx.jobs.get(id))!,
    (j) => ["COMPLETED", "FAILED", "CANCELLED"].includes(j.status),
    20_000,
  );
}

/**
 * A started worker pool over an in-process app's stores (tests drive workers directly instead of
 * the server's background loop): four workers per provider, no per-model cap, inputs passed as
 * stored. Override any option.
 */
export function testWorkerPool(ctx: AppContext, options: Partial<WorkerPoolOptions> = {}): WorkerPool {
  const pool = new WorkerPool({
    jobs: ctx.jobs,
    jobLogs: ctx.jobLogs,
    events: ctx.events,
    providers: ctx.providers,
    catalog: () => ctx.catalog,
    outputs: ctx.outputs,
    concurrency: () => 4,
    modelConcurrency: () => null,
    outputTtlMs: () => 60_000,
    prepareInput: (i) => i,
    readInput: ctx.readInput,
    callbacks: ctx.cogWebhooks,
    ...options,
  });
  pool.start();
  return pool;
}
