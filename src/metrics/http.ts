import { Elysia, t } from "elysia";
import { credentialFrom } from "../auth/authenticate.ts";
import type { LiveSettings } from "../config/schema.ts";
import { errorResponse } from "../http/errors.ts";
import { requestMeta } from "../http/request-meta.ts";
import { errors } from "../http/schemas.ts";
import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { errorFields, log } from "../lib/log.ts";
import type { AppContext } from "../server/context.ts";
import { renderMetrics, type ScrapeSources } from "./collectors.ts";
import { CONTENT_TYPE } from "./exposition.ts";
import type { Metrics } from "./metrics.ts";

const UNAUTHORIZED =
  "Missing or wrong token. Send `Authorization: Bearer <admin token>` or `Bearer <metrics token>` ([metrics] token).";

/** What checking a scrape's token reads: the admin token's hash and the live [metrics] token. */
export interface MetricsAuthDeps {
  adminTokenHash: Uint8Array;
  live: Pick<LiveSettings, "metrics">;
}

/** Bearer admin token, or the scrape token of [metrics] when one is configured. */
export function metricsAuthorized(ctx: MetricsAuthDeps, request: Request): boolean {
  const credential = credentialFrom(request.headers.get("authorization"));
  if (!credential) return false;
  const digest = hashSecret(credential);
  // Both comparisons always run (constant time each): which token matched is not observable.
  const admin = digestsEqual(digest, ctx.adminTokenHash);
  const token = ctx.live.metrics.token;
  const scrape = token !== null && digestsEqual(digest, hashSecret(token));
  return admin || scrape;
}

async function exposition(ctx: ScrapeSources): Promise<Response> {
  return new Response(await renderMetrics(ctx), {
    headers: { "content-type": CONTENT_TYPE, "cache-control": "no-store" },
  });
}

/** GET /metrics on the main port: Prometheus text format, never public. */
export function metricsRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["Operations"] } }).get(
    "/metrics",
    async ({ request }) => {
      if (!metricsAuthorized(ctx, request)) throw new DomainError("unauthorized", UNAUTHORIZED);
      const meta = requestMeta(request);
      if (meta) meta.keyPrefix = "metrics";
      return await exposition(ctx);
    },
    {
      detail: {
        summary: "Prometheus metrics",
        description:
          "Text exposition format 0.0.4. Needs `Authorization: Bearer` with the admin token or the scrape token of `[metrics] token`. Metric names: docs/metrics.md.",
        security: [{ adminToken: [] }],
      },
      response: { 200: t.String({ description: "text/plain; version=0.0.4" }), ...errors(401) },
    },
  );
}

/**
 * The handler of the separate metrics listener ([metrics] listen): /metrics only, with the same
 * tokens unless the operator set `listen_auth = "none"` (then anyone who reaches the address may
 * scrape: bind it to loopback or a private network).
 */
export function metricsListenerFetch(
  ctx: ScrapeSources & MetricsAuthDeps,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const path = new URL(request.url).pathname;
    if (path !== "/metrics")
      return errorResponse(
        new DomainError("not_found", `No route ${request.method} ${path} here; use /metrics.`),
      );
    if (request.method !== "GET" && request.method !== "HEAD")
      return errorResponse(
        new DomainError("method_not_allowed", `${request.method} is not allowed on /metrics; use GET.`),
        undefined,
        {
          allow: "GET, HEAD",
        },
      );
    if (ctx.live.metrics.listenAuth && !metricsAuthorized(ctx, request))
      return errorResponse(new DomainError("unauthorized", UNAUTHORIZED));
    try {
      return await exposition(ctx);
    } catch (err) {
      log("error", "metrics scrape failed", errorFields(err));
      return errorResponse(new DomainError("internal_error", "The metrics could not be collected."));
    }
  };
}

/**
 * Counts one finished request (called by the server's fetch wrapper, which sees the real status of
 * every response, errors included). The route is the template the router matched.
 */
export function observeRequest(ctx: { metrics: Metrics }, request: Request, response: Response): void {
  const meta = requestMeta(request);
  if (meta)
    ctx.metrics.requests.observe(
      request.method,
      meta.route,
      response.status,
      (performance.now() - meta.start) / 1000,
    );
}
