import { Elysia, t } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { ApiError } from "../http/errors.ts";
import type { AppContext } from "../server/context.ts";
import { cancel, ownedJob, statusStream } from "./http.ts";

/** "<owner>/<alias>[/...]/requests/<id>[/status[/stream]|/cancel]", as @fal-ai/client builds it. */
const ALIAS = /^(.+?)\/requests\/([^/]+)(\/status|\/status\/stream|\/cancel)?\/?$/;

/**
 * fal clients poll only until COMPLETED, so on these alias routes a FAILED or CANCELLED job reads
 * as COMPLETED with `error` and `error_type`, and its result read returns the error. The plain
 * /v1/requests routes keep the spec's statuses.
 */
function falStatus(body: Record<string, unknown>) {
  const status = body.status as string;
  if (status !== "FAILED" && status !== "CANCELLED") return body;
  const error = body.error as { code: string; message: string } | null;
  return {
    ...body,
    status: "COMPLETED",
    error:
      status === "CANCELLED" ? "The request was cancelled." : (error?.message ?? "The generation failed."),
    error_type: status === "CANCELLED" ? "cancelled" : (error?.code ?? "generation_failed"),
  };
}

function parse(tail: string) {
  const m = ALIAS.exec(tail);
  if (!m) throw new ApiError("not_found", `No route for /v1/queue/${tail}.`);
  return { id: m[2]!, action: m[3] ?? "" };
}

export function falAliasRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["fal compatibility"], security: [{ apiKey: [] }] } })
    .derive(({ request }) => ({ principal: requirePrincipal(ctx, request) }))
    .get(
      "/queue/*",
      ({ principal, params, query, request }) => {
        const { id, action } = parse(params["*"]);
        const job = ownedJob(ctx, principal, id);
        const logs = query.logs === "1" || query.logs === "true";
        if (action === "/status") return falStatus(ctx.views.status(job, logs));
        if (action === "/status/stream") {
          return statusStream(ctx, job.id, logs, AbortSignal.any([request.signal, ctx.shutdownSignal]), (b) =>
            falStatus(b as Record<string, unknown>),
          );
        }
        if (action !== "") throw new ApiError("not_found", `No route GET /v1/queue/${params["*"]}.`);
        // The result read.
        if (job.status === "COMPLETED") {
          return new Response(JSON.stringify(ctx.views.output(job)), {
            headers: { "content-type": "application/json", "x-fal-request-id": job.id },
          });
        }
        if (job.status === "FAILED") {
          throw new ApiError(
            "generation_failed",
            job.error_message || "The generation failed; nothing was charged.",
            {
              extra: { request_id: job.id },
              headers: { "x-fal-request-id": job.id },
            },
          );
        }
        if (job.status === "CANCELLED") {
          throw new ApiError("conflict", "The request was cancelled; nothing was charged.", {
            extra: { request_id: job.id },
          });
        }
        throw new ApiError("request_not_ready", `The request is ${job.status}.`, {
          extra: { request_id: job.id, status: job.status },
        });
      },
      {
        query: t.Object({ logs: t.Optional(t.String()) }),
        detail: {
          summary: "fal-style status, stream and result",
          description:
            "Aliases built by @fal-ai/client: /v1/queue/{owner}/{alias}/requests/{id}/status, .../status/stream and .../requests/{id} (result). FAILED and CANCELLED read as COMPLETED with error and error_type.",
        },
      },
    )
    .put(
      "/queue/*",
      ({ principal, params }) => {
        const { id, action } = parse(params["*"]);
        if (action !== "/cancel") throw new ApiError("not_found", `No route PUT /v1/queue/${params["*"]}.`);
        return cancel(ctx, principal, id);
      },
      {
        detail: {
          summary: "fal-style cancel",
          description: "PUT /v1/queue/{owner}/{alias}/requests/{id}/cancel.",
        },
      },
    );
}
