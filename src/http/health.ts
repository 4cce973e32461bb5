import { Elysia, t } from "elysia";
import { sqlReady } from "../db/database.ts";
import { freeBytes } from "../files/upload.ts";
import { DomainError } from "../lib/errors.ts";
import { circuitFor } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import { errors } from "./schemas.ts";

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
          throw new DomainError("not_ready", `Not ready: database ${db.detail ?? "unavailable"}.`, {
            details: [{ path: "database", message: db.detail ?? "unavailable" }],
          });
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
          description: "200 when the database answers and every migration is applied; 503 otherwise.",
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
