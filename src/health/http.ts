import { Elysia, t } from "elysia";
import { sqlReady } from "../db/database.ts";
import { freeBytes } from "../files/upload-stream.ts";
import { errorResponse } from "../http/errors.ts";
import { errors } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import { circuitFor } from "../providers/circuit.ts";
import type { AppContext } from "../server/context.ts";

/**
 * Seconds a client waits before asking a starting or unready instance again: a start takes 61-81 ms
 * from spawn to the first 200 on a quiet host (docs/performance.md), longer when migrations run on a
 * large database; a database that does not answer is usually a restart or a fail-over of seconds.
 */
export const NOT_READY_RETRY_SECONDS = 2;

/**
 * What an instance answers between binding its port and serving (a restart): the contract's 503
 * `capacity_unavailable` with Retry-After, as for any other temporary refusal, never a code of its own.
 */
export function startingResponse(): Response {
  return errorResponse(
    new DomainError("capacity_unavailable", "The server is starting; retry shortly.", {
      retryAfterSeconds: NOT_READY_RETRY_SECONDS,
    }),
  );
}

/** Liveness and readiness probes for systemd, load balancers and orchestrators. */
export function healthRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["Operations"] } })
    .get("/healthz", () => ({ status: "ok" as const }), {
      detail: { summary: "Liveness", description: "200 while the process serves HTTP." },
      response: { 200: t.Object({ status: t.Literal("ok") }) },
    })
    .get(
      "/readyz",
      async () => {
        const db = await sqlReady(ctx.sql);
        if (!db.ok) {
          throw new DomainError(
            "capacity_unavailable",
            `Not ready: database ${db.detail ?? "unavailable"}.`,
            {
              details: [{ path: "database", message: db.detail ?? "unavailable" }],
              retryAfterSeconds: NOT_READY_RETRY_SECONDS,
            },
          );
        }
        const used = await ctx.files.usageBytes();
        const free = freeBytes(ctx.files.root);
        return {
          status: "ready" as const,
          version: ctx.version,
          schema_version: db.schema_version,
          models: ctx.catalog.models.length,
          uptime_seconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
          providers: Object.fromEntries(
            Object.entries(ctx.live.providers).map(([name, p]) => [
              name,
              { type: p.type, ...circuitFor(ctx.circuits, name).view() },
            ]),
          ),
          storage: {
            uploads_bytes: used.files,
            outputs_bytes: used.outputs,
            free_bytes: free,
            min_free_bytes: ctx.live.files.minFreeBytes,
            accepting_uploads: free >= ctx.live.files.minFreeBytes,
          },
        };
      },
      {
        detail: {
          summary: "Readiness",
          description:
            "200 when the database answers and every migration is applied; otherwise 503 capacity_unavailable with Retry-After.",
        },
        response: {
          200: t.Object({
            status: t.Literal("ready"),
            version: t.String(),
            schema_version: t.Integer(),
            models: t.Integer(),
            uptime_seconds: t.Integer(),
            providers: t.Record(
              t.String(),
              t.Object({
                type: t.String(),
                state: t.String(),
                consecutive_failures: t.Integer(),
                healthy: t.Boolean(),
              }),
              {
                description:
                  "Upstream providers and their circuit state (open = unhealthy, submits get 503).",
              },
            ),
            storage: t.Object({
              uploads_bytes: t.Integer(),
              outputs_bytes: t.Integer(),
              free_bytes: t.Integer({ description: "Free space on the file system of the data dir." }),
              min_free_bytes: t.Integer(),
              accepting_uploads: t.Boolean({ description: "false below min_free_bytes: uploads get 507." }),
            }),
          }),
          ...errors(503),
        },
      },
    );
}
