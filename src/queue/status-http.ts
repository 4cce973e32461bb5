import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { ownedJob } from "./ownership.ts";
import { IdParams, StatusSchema } from "./schemas.ts";
import { statusStream } from "./status-stream.ts";

type StatusRequest = { principal: Principal; params: { id: string }; query: { logs?: string } };
const withLogs = (query: { logs?: string }) => query.logs === "1" || query.logs === "true";

/** GET /v1/requests/{id}/status and its SSE stream. */
export function statusRoutes(ctx: AppContext) {
  // A Response skips Elysia's runtime response validation on the hottest read; the schema
  // below still documents it, and the tests check the body's shape.
  async function status({ principal, params, query }: StatusRequest) {
    const job = await ownedJob(ctx, principal, params.id);
    return jsonResponse(JSON.stringify(await ctx.views.status(job, withLogs(query))));
  }

  async function stream({ principal, params, query, request }: StatusRequest & { request: Request }) {
    const job = await ownedJob(ctx, principal, params.id);
    return statusStream(ctx, job.id, withLogs(query), AbortSignal.any([request.signal, ctx.shutdownSignal]));
  }

  return new Elysia()
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/requests/:id/status", status, {
      params: IdParams,
      query: t.Object({ logs: t.Optional(t.String({ description: "1 to include the job's log lines" })) }),
      detail: {
        summary: "Get a request's status",
        description: "Live queue_position; logs with ?logs=1. Polls never count as writes.",
      },
      response: { 200: StatusSchema, ...errors(400, 401, 404) },
    })
    .get("/requests/:id/status/stream", stream, {
      params: IdParams,
      query: t.Object({ logs: t.Optional(t.String()) }),
      detail: {
        summary: "Stream a request's status",
        description: "Server-sent events: one status body per change, closed after a final state.",
        responses: {
          200: {
            description: "text/event-stream",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
        },
      },
    });
}
