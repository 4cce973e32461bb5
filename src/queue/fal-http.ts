import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { falError, falFailedResponse } from "../http/fal-errors.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { falStatus } from "./fal-answers.ts";
import type { JobRow } from "./job-row.ts";
import { type OwnershipDeps, ownedJob, tryCancel } from "./ownership.ts";
import { statusStream } from "./status-stream.ts";

/** "<owner>/<alias>[/...]/requests/<id>[/status[/stream]|/cancel]", as fal clients build it. */
const ALIAS = /^(.+?)\/requests\/([^/]+)(\/status|\/status\/stream|\/cancel)?\/?$/;

async function falResult(ctx: Pick<AppContext, "views">, request: Request, job: JobRow): Promise<Response> {
  if (job.status === "COMPLETED") {
    return new Response(JSON.stringify(await ctx.views.output(job)), {
      headers: { "content-type": "application/json", "x-fal-request-id": job.id },
    });
  }
  if (job.status === "FAILED") return falFailedResponse(request, job);
  if (job.status === "CANCELLED") {
    // 400, never 409: fal_client retries a 409 ten times (about 50 s) before giving up.
    return falError(
      request,
      400,
      new DomainError("conflict", "The request was cancelled; nothing was charged.", {
        extra: { request_id: job.id, status: job.status },
      }),
      "cancelled",
      job,
    );
  }
  // fal answers a result read before completion with 400 "Request is still in progress", word for
  // word: the AI SDK's fal video model polls on exactly that detail
  // (@ai-sdk/fal/src/fal-video-model.ts, fetchStatus) and fails on any other. The status is in the body.
  return falError(
    request,
    400,
    new DomainError("request_not_ready", "Request is still in progress", {
      extra: { request_id: job.id, status: job.status },
    }),
    "request_not_ready",
    job,
  );
}

/**
 * Cancel as fal answers it: 202 {"status": "CANCELLATION_REQUESTED"} when the job was taken out of
 * the queue, 400 {"status": "ALREADY_COMPLETED"} once it has ended. A running job cannot be stopped
 * here (fal forwards a signal the app may ignore): 400 with the reason instead of a 202 that would
 * let the caller believe it was cancelled, and never the 409 that fal_client retries.
 */
async function falCancel(
  ctx: OwnershipDeps,
  request: Request,
  principal: Principal,
  id: string,
): Promise<Response> {
  const r = await tryCancel(ctx, principal, id);
  const job = r.job;
  if (r.cancelled) {
    return new Response(JSON.stringify({ status: "CANCELLATION_REQUESTED", request_id: job.id }), {
      status: 202,
      headers: { "content-type": "application/json", "x-fal-request-id": job.id },
    });
  }
  const now = r.now;
  const running = now.status === "IN_QUEUE" || now.status === "IN_PROGRESS";
  return falError(
    request,
    400,
    new DomainError(
      "not_cancellable",
      running
        ? `The request is ${now.status}; a running request cannot be stopped, only IN_QUEUE requests can be cancelled.`
        : `The request has already ended (${now.status}).`,
      { extra: { request_id: job.id, status: now.status } },
    ),
    "not_cancellable",
    job,
    { status: running ? now.status : "ALREADY_COMPLETED" },
  );
}

function parse(tail: string) {
  const m = ALIAS.exec(tail);
  if (!m) throw new DomainError("not_found", `No route for /v1/queue/${tail}.`);
  return { id: m[2]!, action: m[3] ?? "" };
}

export function falAliasRoutes(ctx: AppContext) {
  const base = () => `${ctx.publicUrl}/v1`;
  return new Elysia({ prefix: "/v1", detail: { tags: ["fal compatibility"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get(
      "/queue/*",
      async ({ principal, params, query, request }) => {
        const { id, action } = parse(params["*"]);
        const job = await ownedJob(ctx, principal, id);
        const logs = query.logs === "1" || query.logs === "true";
        if (action === "/status") {
          const body = falStatus(base(), await ctx.views.status(job, logs));
          // fal answers 202 while the request is queued or running and 200 once it is COMPLETED.
          return new Response(JSON.stringify(body), {
            status: body.status === "COMPLETED" ? 200 : 202,
            headers: { "content-type": "application/json", "x-fal-request-id": job.id },
          });
        }
        if (action === "/status/stream") {
          return statusStream(ctx, job.id, logs, AbortSignal.any([request.signal, ctx.shutdownSignal]), (b) =>
            falStatus(base(), b as Record<string, unknown>),
          );
        }
        if (action !== "") throw new DomainError("not_found", `No route GET /v1/queue/${params["*"]}.`);
        return falResult(ctx, request, job);
      },
      {
        query: t.Object({ logs: t.Optional(t.String()) }),
        detail: {
          summary: "fal-style status, stream and result",
          description:
            "Routes fal clients build: /v1/queue/{owner}/{alias}/requests/{id}/status (202 while open, 200 once done), .../status/stream and .../requests/{id} (result). FAILED and CANCELLED read as COMPLETED with error and error_type; the result of a FAILED job is 500, of a CANCELLED or unfinished one 400, with detail and error_type as fal answers.",
        },
      },
    )
    .put(
      "/queue/*",
      async ({ principal, params, request }) => {
        const { id, action } = parse(params["*"]);
        if (action !== "/cancel")
          throw new DomainError("not_found", `No route PUT /v1/queue/${params["*"]}.`);
        return await falCancel(ctx, request, principal, id);
      },
      {
        detail: {
          summary: "fal-style cancel",
          description:
            'PUT /v1/queue/{owner}/{alias}/requests/{id}/cancel: 202 {"status":"CANCELLATION_REQUESTED"} for a queued job; 400 for a running or ended one ("ALREADY_COMPLETED").',
        },
      },
    );
}
