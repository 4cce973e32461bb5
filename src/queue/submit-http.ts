import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { falFailedResponse } from "../http/fal-errors.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import { claimOf, type IdempotencyClaim, replayResponse } from "../idempotency/idempotency.ts";
import { apiOpener, type OpenerDeps } from "../jobs/open.ts";
import { baseUrl } from "../lib/url.ts";
import type { AppContext } from "../server/context.ts";
import { forFalClient, isFalClient } from "./fal-answers.ts";
import { runRequest } from "./run-request.ts";
import { ModelInput, QueuedSchema, SubmitQuery } from "./schemas.ts";
import { runJob, type SubmitInput, submitJob } from "./submit.ts";

type SubmitRequest = {
  principal: Principal;
  params: { "*": string };
  body: unknown;
  query: { webhook_url?: string; fal_webhook?: string };
  request: Request;
};

/** A submit of this request: its key as the opener, the model from the path, the webhook from the query. */
function submitOf(ctx: OpenerDeps, r: SubmitRequest, idempotency: IdempotencyClaim | null): SubmitInput {
  return {
    who: apiOpener(ctx, r.principal),
    modelId: r.params["*"],
    body: r.body,
    queryWebhook: r.query.webhook_url ?? r.query.fal_webhook ?? null,
    idempotency,
  };
}

/** POST /v1/queue/{model} and POST /v1/run/{model}: open a job, or open one and wait for it. */
export function submitRoutes(ctx: AppContext) {
  async function submit(r: SubmitRequest) {
    const opened = await submitJob(ctx, submitOf(ctx, r, claimOf(r.request, r.body)));
    // fal clients get the fal alias routes as status_url/response_url/cancel_url.
    const fal = isFalClient(r.request);
    if (opened.replay) {
      const stored = opened.replay;
      const replay = fal ? JSON.stringify(forFalClient(baseUrl(ctx), JSON.parse(stored.body))) : stored.body;
      return replayResponse(stored, 200, replay);
    }
    const view = await ctx.views.queued(opened.value, { hold: opened.hold });
    return jsonResponse(JSON.stringify(fal ? forFalClient(baseUrl(ctx), view) : view), 202);
  }

  async function run(r: SubmitRequest) {
    const out = await runRequest(ctx, {
      keyId: r.principal.keyId,
      claim: claimOf(r.request, r.body),
      fal: isFalClient(r.request),
      run: async () => await runJob(ctx, submitOf(ctx, r, null), r.request.signal),
    });
    if ("replay" in out) return replayResponse(out.replay);
    if ("falFailed" in out) return falFailedResponse(r.request, out.falFailed);
    const headers: Record<string, string> = out.requestId ? { "x-fal-request-id": out.requestId } : {};
    return jsonResponse(out.answer.body, out.answer.status, headers);
  }

  return new Elysia()
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post("/queue/*", submit, {
      body: ModelInput,
      query: SubmitQuery,
      detail: {
        summary: "Submit a job",
        description:
          "Validates and prices the input, reserves the price and queues the job: 202 with the queued request. Idempotency-Key replays answer 200.",
        parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
      },
      response: { 202: QueuedSchema, 200: QueuedSchema, ...errors(400, 401, 402, 403, 409, 429, 503) },
    })
    .post("/run/*", run, {
      body: ModelInput,
      query: SubmitQuery,
      detail: {
        summary: "Submit and wait",
        description:
          "Like /queue, then waits up to run_wait_seconds (default 90): 200 with the model output, 202 with the queued request if still running, 502 generation_failed if it failed.",
      },
      response: {
        200: t.Record(t.String(), t.Unknown()),
        202: QueuedSchema,
        ...errors(400, 401, 402, 403, 409, 429, 502, 503),
      },
    });
}
