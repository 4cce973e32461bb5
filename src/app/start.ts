import { mkdirSync } from "node:fs";
import type { Server } from "bun";
import type { ServerSettings } from "../config/schema.ts";
import { openSql } from "../db/open-sql.ts";
import { openBlobBackend } from "../files/open-blob-backend.ts";
import { refreshRateOnce, scheduleFxRefresh } from "../fx/refresh.ts";
import { startingResponse } from "../health/http.ts";
import { errorResponse } from "../http/errors.ts";
import { requestMeta } from "../http/request-meta.ts";
import { DomainError } from "../lib/errors.ts";
import { errorFields, log } from "../lib/log.ts";
import { metricsListenerFetch, observeRequest } from "../metrics/http.ts";
import { fillProviders } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import { dataDirPaths, ensureWritableDataDir, writePublicUrlFile } from "../server/datadir.ts";
import { hostForUrl, publicUrlOf } from "../server/public-url.ts";
import { openServerSecrets } from "../server/shared-secrets.ts";
import { createApp } from "./app.ts";
import { createAppContext, loadLive } from "./app-context.ts";
import { startBackground } from "./background.ts";

export class StartError extends Error {}

export interface RunningServer {
  ctx: AppContext;
  server: Server<undefined>;
  url: string;
  /** Secrets created by this start (shown once), null when they already existed. */
  firstStart: { adminToken: string | null; defaultKey: string | null; ownerInvite: string | null };
  reload(): { ok: true; models: number } | { ok: false; error: string };
  stop(): Promise<void>;
}

/**
 * Starts gengate. Order matters for "no partial writes": configuration and catalog are validated
 * first, then the port is bound (a port in use fails here), and only then is the data dir touched.
 */
export async function startServer(settings: ServerSettings): Promise<RunningServer> {
  const { live, catalog } = loadLive(settings.configPath);

  const scheme = settings.tls ? "https" : "http";
  let server: Server<undefined>;
  try {
    server = Bun.serve({
      hostname: settings.host,
      port: settings.port,
      development: false,
      // Bun binds with SO_REUSEPORT by default on Linux: a second gengate would silently share the port.
      reusePort: false,
      // Bun's own limit answers a bare 413 before any handler; the real limits (uploads counted while
      // streaming, JSON bodies read with a cap) are enforced by the handlers with the contract's error.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // /run waits up to run_wait_seconds with no bytes on the wire; Bun's default idle limit is 10 s.
      idleTimeout: 255,
      // gengate terminates TLS itself when given a certificate (fal's Python client speaks only https).
      ...(settings.tls
        ? { tls: { cert: Bun.file(settings.tls.cert), key: Bun.file(settings.tls.key) } }
        : {}),
      fetch: startingResponse,
      error: lastResortError,
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (settings.tls && code !== "EADDRINUSE" && code !== "EACCES" && code !== "EADDRNOTAVAIL") {
      // A certificate and key that do not parse or do not match.
      throw new StartError(`tls: cannot use ${settings.tls.cert} with ${settings.tls.key} (${oneLine(err)})`);
    }
    throw new StartError(`port ${settings.port} on ${settings.host} ${bindFailure(err)}`);
  }
  // [metrics] listen: a second port serving only /metrics, bound before the data dir is touched too.
  let metricsServer: Server<undefined> | null = null;
  const metricsAt = live.metrics.listen;
  if (metricsAt) {
    try {
      metricsServer = Bun.serve({
        hostname: metricsAt.host,
        port: metricsAt.port,
        development: false,
        reusePort: false,
        fetch: () => new Response("starting", { status: 503 }),
      });
    } catch (err) {
      server.stop(true);
      throw new StartError(`metrics.listen: port ${metricsAt.port} on ${metricsAt.host} ${bindFailure(err)}`);
    }
  }

  try {
    const paths = dataDirPaths(settings.dataDir);
    ensureWritableDataDir(paths);
    mkdirSync(paths.files, { recursive: true, mode: 0o700 });
    const blobs = openBlobBackend(settings.storage, paths.root, { atStart: true });
    const publicUrl = publicUrlOf(settings, server.port ?? settings.port);
    // SQLite only: on PostgreSQL an instance's data dir holds no state of its own (docs/scale-out.md),
    // and several instances would each record their own port; the CLI takes --public-url there.
    if ((settings.database ?? { kind: "sqlite" }).kind === "sqlite") {
      try {
        writePublicUrlFile(paths, publicUrl);
      } catch (err) {
        // Only the CLI's links read it (they fall back to the configured address): not worth failing a start.
        log("warn", "could not record the public URL in the data dir", errorFields(err));
      }
    }
    const database = await openSql(settings.database ?? { kind: "sqlite" }, paths.database);
    // The data dir's files on SQLite; rows every instance shares on PostgreSQL (shared-secrets.ts).
    const secrets = await openServerSecrets(settings.database ?? { kind: "sqlite" }, database.sql, paths);
    const { ctx, shutdown, defaultKey, ownerInvite } = await createAppContext({
      sql: database.sql,
      sqlite: database.sqlite,
      live,
      catalog,
      settings,
      publicUrl,
      filesRoot: paths.files,
      blobs,
      linkSecrets: secrets.linkSecrets,
      adminTokenHash: secrets.adminTokenHash,
    });
    // `gengate secret rotate` and `secret admin-token` (PostgreSQL: within 1 s; SQLite: at SIGHUP).
    secrets.follow(ctx.invalidation, (now) => {
      ctx.signer.setSecrets(now.linkSecrets);
      ctx.adminTokenHash = now.adminTokenHash;
    });
    // The FX refresh follows the live settings: rescheduled on every reload.
    let fxJob = ctx.live.fxRefresh ? scheduleFxRefresh(ctx.live.fxRefresh, ctx.fx, ctx.leadership) : null;
    if (ctx.live.fxRefresh && !(await ctx.fx.get("RUB"))) void refreshRateOnce(ctx.live.fxRefresh, ctx.fx);
    const background = await startBackground(ctx);
    const app = createApp(ctx, { peers: server });
    const handle = app.fetch;
    // One full collection of start-up's garbage (module set-up, the app's construction) before the
    // first request is served, when no request can wait on the pause: idle RSS 0.9 MB lower for a
    // few ms on the way to the first 200 (docs/performance.md, issue 19, fifth pass).
    Bun.gc(true);
    ctx.metrics.eventLoopLag.start();
    server.reload({
      fetch: async (request: Request) => {
        let response: Response;
        try {
          response = await handle(request);
        } catch (err) {
          // Elysia maps handler errors itself; this is the last line of defence, never expected.
          log("error", "request crashed outside the app", errorFields(err));
          response = errorResponse(
            new DomainError("internal_error", "An unexpected error occurred; it has been logged."),
          );
        }
        accessLog(request, response);
        observeRequest(ctx, request, response);
        return response;
      },
      error: lastResortError,
    });
    if (metricsServer) {
      metricsServer.reload({ fetch: metricsListenerFetch(ctx) });
      log("info", "metrics listening", {
        url: `http://${hostForUrl(metricsServer.hostname ?? "")}:${metricsServer.port}/metrics`,
        auth: ctx.live.metrics.listenAuth ? "token" : "none",
      });
    }

    return {
      ctx,
      server,
      url: `${scheme}://${hostForUrl(settings.host)}:${server.port}`,
      firstStart: {
        adminToken: secrets.newAdminToken,
        defaultKey: defaultKey?.key ?? null,
        ownerInvite: ownerInvite?.url ?? null,
      },
      reload() {
        try {
          const next = loadLive(settings.configPath);
          ctx.live = next.live;
          ctx.catalog = next.catalog;
          secrets.reload(); // picks up `gengate secret` changes (on PostgreSQL also without SIGHUP)
          fillProviders(ctx.providers, next.live, ctx.circuits);
          fxJob?.stop();
          fxJob = next.live.fxRefresh ? scheduleFxRefresh(next.live.fxRefresh, ctx.fx, ctx.leadership) : null;
          return { ok: true, models: next.catalog.models.length };
        } catch (err) {
          return { ok: false, error: (err as Error).message };
        }
      },
      async stop() {
        fxJob?.stop();
        // End long waits (/run, status streams) first, so in-flight requests can finish promptly.
        shutdown.abort();
        // stop(false): no new connections; resolves once in-flight requests have finished.
        await server.stop(false);
        metricsServer?.stop(true);
        ctx.metrics.eventLoopLag.stop();
        // Running jobs get 10 s; the rest stay IN_PROGRESS and are resumed at the next start.
        await background.stop(10_000);
        // Then the sweeps finish and free their names, caches stop polling, the bus closes.
        await ctx.leadership.close();
        await secrets.stop();
        await ctx.invalidation.stop();
        await ctx.bus.close();
        await database.close();
      },
    };
  } catch (err) {
    server.stop(true);
    metricsServer?.stop(true);
    throw err;
  }
}

/** Why a port could not be bound, as the end of "port N on HOST ...". */
function bindFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EADDRINUSE" ? "is already in use" : `cannot be bound (${code ?? (err as Error).message})`;
}

const oneLine = (err: unknown) =>
  String((err as Error).message ?? err)
    .split("\n")[0]!
    .slice(0, 200);

/**
 * Bun's own error handler: a response that fails after the app returned it (a body that cannot be
 * read) would otherwise be Bun's plain-text "Something went wrong!" page with the stack on stderr.
 * The request is not known here; the line carries the error.
 */
function lastResortError(err: Error): Response {
  log("error", "response failed after the handler returned", errorFields(err));
  return errorResponse(
    new DomainError("internal_error", "An unexpected error occurred; it has been logged."),
  );
}

/** One structured line per request: id, method, route, status, duration and key prefix. */
function accessLog(request: Request, response: Response): void {
  const meta = requestMeta(request);
  const url = request.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", pathStart);
  log("info", "request", {
    id: meta?.id ?? response.headers.get("x-request-id"),
    method: request.method,
    route: meta?.route ?? null,
    path: q === -1 ? url.slice(pathStart) : url.slice(pathStart, q),
    status: response.status,
    duration_ms: meta ? Math.round((performance.now() - meta.start) * 100) / 100 : null,
    key: meta?.keyPrefix ?? null,
  });
}
