import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashSecret } from "../../src/accounts/keys.ts";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { liveSettingsFrom } from "../../src/config/load.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { createApp } from "../../src/http/app.ts";
import { setLogSink } from "../../src/lib/log.ts";
import { createQueueServices } from "../../src/queue/runtime.ts";
import type { AppContext } from "../../src/server/context.ts";
import { createServices } from "../../src/server/services.ts";

export const ADMIN_TOKEN = "gat_testtesttesttesttesttesttesttesttesttest";

/** Captured log lines of in-process apps (tests assert on them instead of printing). */
export const logLines: string[] = [];
setLogSink((line) => {
  logLines.push(line);
  if (logLines.length > 5000) logLines.splice(0, 1000);
});

/**
 * An in-process gengate on an in-memory database: the real app, routes and services, without
 * a socket. Black-box tests that need a process use startServer() in ./server.ts instead.
 */
export function makeTestApp(
  options: {
    models?: unknown[];
    sandbox?: boolean;
    now?: () => number;
    providers?: Record<string, unknown>;
  } = {},
) {
  const db = openDatabase(":memory:");
  migrate(db);
  const services = createServices(db, "http://gengate.test", options.now);
  const { accounts } = services;
  const { key, account, keyId } = accounts.createAccount("default", "USD");
  const live = liveSettingsFrom({
    models: options.models ?? [],
    catalog: { sandbox: options.sandbox ?? true },
    ...(options.providers ? { providers: options.providers as never } : {}),
  });
  const filesRoot = mkdtempSync(join(tmpdir(), "gengate-files-"));
  const queue = createQueueServices(db, services, {
    baseUrl: "http://gengate.test/v1",
    filesRoot,
    linkSecrets: ["test-secret-test-secret-test-secret"],
    webhookPolicy: () => ctx.live.webhooks,
    live: () => live,
  });
  const ctx: AppContext = {
    db,
    ...services,
    ...queue,
    shutdownSignal: new AbortController().signal,
    catalog: buildCatalog(live.models, {
      sandbox: live.sandbox,
      providers: Object.fromEntries(Object.entries(live.providers).map(([n, p]) => [n, p.type])),
    }),
    live,
    settings: {
      host: "127.0.0.1",
      port: 0,
      dataDir: ":memory:",
      publicUrl: "http://gengate.test",
      configPath: null,
    },
    publicUrl: "http://gengate.test",
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    version: "0.0.0-test",
    startedAt: Date.now(),
  };
  const app = createApp(ctx);
  const request = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    const k = init.key === undefined ? key : init.key;
    if (k) headers.set("authorization", `Key ${k}`);
    return app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
  };
  return { app, ctx, db, key, keyId, account, request };
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
