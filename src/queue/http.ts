import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/accounts.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import {
  claimOf,
  type IdempotencyClaim,
  replayResponse,
  type StoredResponse,
} from "../idempotency/idempotency.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN as UUID } from "../lib/ids.ts";
import { errorFields, log } from "../lib/log.ts";
import { type AppContext, baseUrl } from "../server/context.ts";
import { JOB_POLL_MS } from "./events.ts";
import { falFailedResponse, forFalClient, isFalClient } from "./fal-answers.ts";
import { FINAL_STATUSES, type JobRow } from "./job-row.ts";
import { QueuedSchema, RecordListSchema, RecordSchema, StatusSchema } from "./schemas.ts";
import { apiOpener, runJob, type SubmitInput, submitJob } from "./submit.ts";

const IdParams = t.Object({ id: t.String({ description: "request_id (UUID)" }) });
const ModelInput = t.Record(t.String(), t.Unknown(), {
  description: "The model input (see the model's input_schema); may carry webhook_url.",
});
const SubmitQuery = t.Object({
  webhook_url: t.Optional(t.String({ description: "Public URL that gets one POST when the job ends." })),
  fal_webhook: t.Optional(t.String({ description: "Alias of webhook_url (fal clients)." })),
});

/** A request id from the path: malformed is 400, another account's or unknown is 404. */
export async function ownedJob(ctx: AppContext, principal: Principal, id: string): Promise<JobRow> {
  if (!UUID.test(id))
    throw new DomainError("validation_error", "request_id must be a UUID.", { param: "request_id" });
  const job = await ctx.jobs.getOwned(id, principal.accountId);
  if (!job) throw new DomainError("not_found", `No request ${id}.`, { param: "request_id" });
  return job;
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/** A submit of this request: its key as the opener, the model from the path, the webhook from the query. */
function submitOf(
  ctx: AppContext,
  principal: Principal,
  modelId: string,
  body: unknown,
  query: { webhook_url?: string; fal_webhook?: string },
  idempotency: IdempotencyClaim | null,
): SubmitInput {
  return {
    who: apiOpener(ctx, principal),
    modelId,
    body,
    queryWebhook: query.webhook_url ?? query.fal_webhook ?? null,
    idempotency,
  };
}

/** The asynchronous half of the API: submit, run, read, stream and cancel jobs. */
export function queueRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Queue"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post(
      "/queue/*",
      async ({ principal, params, body, query, request }) => {
        const opened = await submitJob(
          ctx,
          submitOf(ctx, principal, params["*"], body, query, claimOf(request, body)),
        );
        // fal clients get the fal alias routes as status_url/response_url/cancel_url.
        const fal = isFalClient(request);
        if (opened.replay) {
          const stored = opened.replay;
          const replay = fal
            ? JSON.stringify(forFalClient(baseUrl(ctx), JSON.parse(stored.body)))
            : stored.body;
          return replayResponse(stored, 200, replay);
        }
        const view = await ctx.views.queued(opened.value, { hold: opened.hold });
        return json(fal ? forFalClient(baseUrl(ctx), view) : view, 202);
      },
      {
        body: ModelInput,
        query: SubmitQuery,
        detail: {
          summary: "Submit a job",
          description:
            "Validates and prices the input, reserves the price and queues the job: 202 with the queued request. Idempotency-Key replays answer 200.",
          parameters: [
            { name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } },
          ],
        },
        response: { 202: QueuedSchema, 200: QueuedSchema, ...errors(400, 401, 402, 409, 429, 503) },
      },
    )
    .post(
      "/run/*",
      async ({ principal, params, body, query, request }) => {
        const claim = await ctx.idempotency.claimRunning(principal.keyId, claimOf(request, body));
        if (claim.replay) return replayResponse(claim.replay);
        let answer: StoredResponse | null = null;
        try {
          const done = await runJob(
            ctx,
            submitOf(ctx, principal, params["*"], body, query, null),
            request.signal,
          );
          if (done.status === "COMPLETED") {
            answer = { status: 200, body: JSON.stringify(await ctx.views.output(done)) };
            return json(answer.body, 200, { "x-fal-request-id": done.id });
          }
          if (done.status === "FAILED") {
            // fal clients retry a 502 /run, which would submit the job again: they get fal's 500.
            if (isFalClient(request)) return falFailedResponse(request, done);
            throw new DomainError(
              "generation_failed",
              done.error_message || "The generation failed; nothing was charged.",
              { extra: { request_id: done.id } },
            );
          }
          const view = await ctx.views.queued(done);
          answer = {
            status: 202,
            body: JSON.stringify(isFalClient(request) ? forFalClient(baseUrl(ctx), view) : view),
          };
          return json(answer.body, 202);
        } finally {
          await claim.settle(answer);
        }
      },
      {
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
          ...errors(400, 401, 402, 409, 429, 502, 503),
        },
      },
    )
    .get(
      "/requests",
      async ({ principal, query }) => {
        const { limit, cursor } = paging(query, idCursor(UUID));
        const rows = await ctx.jobs.list(principal.accountId, {
          limit: limit + 1,
          before: cursor,
          status: query.status,
          modelId: query.model_id,
        });
        const page = rows.slice(0, limit);
        return {
          data: await Promise.all(page.map(async (j) => await ctx.views.listItem(j))),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
      },
      {
        query: t.Object({
          ...PagingQuery,
          status: t.Optional(
            t.Union([
              t.Literal("IN_QUEUE"),
              t.Literal("IN_PROGRESS"),
              t.Literal("COMPLETED"),
              t.Literal("FAILED"),
              t.Literal("CANCELLED"),
            ]),
          ),
          model_id: t.Optional(t.String({ maxLength: 256 })),
        }),
        detail: {
          summary: "List requests",
          description: "The account's requests, newest first, without their input.",
        },
        response: { 200: RecordListSchema, ...errors(400, 401) },
      },
    )
    .get(
      "/requests/:id",
      async ({ principal, params }) => ctx.views.record(await ownedJob(ctx, principal, params.id)),
      {
        params: IdParams,
        detail: {
          summary: "Get a request",
          description: "The full record: status, input, price and fresh output_urls.",
        },
        response: { 200: RecordSchema, ...errors(400, 401, 404) },
      },
    )
    .get(
      "/requests/:id/status",
      // A Response skips Elysia's runtime response validation on the hottest read; the schema
      // below still documents it, and the tests check the body's shape.
      async ({ principal, params, query }) =>
        json(
          await ctx.views.status(
            await ownedJob(ctx, principal, params.id),
            query.logs === "1" || query.logs === "true",
          ),
          200,
        ),
      {
        params: IdParams,
        query: t.Object({ logs: t.Optional(t.String({ description: "1 to include the job's log lines" })) }),
        detail: {
          summary: "Get a request's status",
          description: "Live queue_position; logs with ?logs=1. Polls never count as writes.",
        },
        response: { 200: StatusSchema, ...errors(400, 401, 404) },
      },
    )
    .get(
      "/requests/:id/status/stream",
      async ({ principal, params, query, request }) => {
        const job = await ownedJob(ctx, principal, params.id);
        return statusStream(
          ctx,
          job.id,
          query.logs === "1" || query.logs === "true",
          AbortSignal.any([request.signal, ctx.shutdownSignal]),
        );
      },
      {
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
      },
    )
    .get(
      "/requests/:id/response",
      async ({ principal, params }) => {
        const job = await ownedJob(ctx, principal, params.id);
        if (job.status !== "COMPLETED") {
          throw new DomainError(
            "request_not_ready",
            `The request is ${job.status}; the response can be read once it is COMPLETED.`,
            {
              extra: { request_id: job.id, status: job.status },
            },
          );
        }
        return json(await ctx.views.output(job), 200, { "x-fal-request-id": job.id });
      },
      {
        params: IdParams,
        detail: {
          summary: "Get a request's output",
          description: "The model output; media fields hold signed URLs reissued at every read.",
        },
        response: { 200: t.Record(t.String(), t.Unknown()), ...errors(400, 401, 404, 409) },
      },
    )
    .post("/requests/:id/cancel", async ({ principal, params }) => await cancel(ctx, principal, params.id), {
      params: IdParams,
      detail: {
        summary: "Cancel a request",
        description: "200 only while IN_QUEUE (the hold is released); 409 not_cancellable otherwise.",
      },
      response: {
        200: t.Object({ request_id: t.String(), status: t.Literal("CANCELLED") }),
        ...errors(400, 401, 404, 409),
      },
    })
    .put("/requests/:id/cancel", async ({ principal, params }) => await cancel(ctx, principal, params.id), {
      params: IdParams,
      detail: { summary: "Cancel a request (PUT)", description: "Same as POST." },
      response: {
        200: t.Object({ request_id: t.String(), status: t.Literal("CANCELLED") }),
        ...errors(400, 401, 404, 409),
      },
    });
}

export async function cancel(ctx: AppContext, principal: Principal, id: string) {
  const job = await ownedJob(ctx, principal, id);
  if (!(await ctx.jobs.cancel(job.id, Date.now()))) {
    const now = (await ctx.jobs.get(job.id))!;
    throw new DomainError(
      "not_cancellable",
      `The request is ${now.status}; only IN_QUEUE requests can be cancelled.`,
      {
        extra: { request_id: job.id, status: now.status },
      },
    );
  }
  return { request_id: job.id, status: "CANCELLED" as const };
}

/** SSE: the status now, then one event per change; a comment every 15 s keeps proxies from closing it. */
export function statusStream(
  ctx: AppContext,
  id: string,
  withLogs: boolean,
  signal: AbortSignal,
  map = (b: unknown) => b,
): Response {
  const enc = new TextEncoder();
  let closed = false;
  let off: () => void = () => {};
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let last = "";
      const close = () => {
        if (closed) return;
        closed = true;
        off();
        clearInterval(keepAlive);
        clearInterval(poll);
        controller.close();
      };
      const read = async () => {
        const job = (await ctx.jobs.get(id))!;
        const body = JSON.stringify(map(await ctx.views.status(job, withLogs)));
        if (closed) return;
        if (body !== last) {
          last = body;
          controller.enqueue(enc.encode(`event: status\ndata: ${body}\n\n`));
        }
        if (FINAL_STATUSES.includes(job.status)) close();
      };
      // One read at a time (events and the poll both ask); one asked for meanwhile runs after it.
      let reading: Promise<void> | null = null;
      let again = false;
      const push = async (): Promise<void> => {
        if (closed) return;
        if (reading) {
          again = true;
          return await reading;
        }
        reading = (async () => {
          try {
            do {
              again = false;
              await read();
            } while (again && !closed);
          } catch (err) {
            log("warn", "status stream read failed", { request_id: id, ...errorFields(err) });
          } finally {
            reading = null;
          }
        })();
        return await reading;
      };
      off = ctx.events.onJob(id, () => void push());
      // The events are hints (another instance's may be lost): re-read every JOB_POLL_MS as well.
      poll = setInterval(() => void push(), JOB_POLL_MS);
      keepAlive = setInterval(() => !closed && controller.enqueue(enc.encode(": keep-alive\n\n")), 15_000);
      signal.addEventListener("abort", close, { once: true });
      await push();
    },
    cancel() {
      closed = true;
      off();
      clearInterval(keepAlive);
      clearInterval(poll);
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
