import { Elysia } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { claimOf, replayResponse } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import type { AppContext } from "../server/context.ts";
import { openFalStream } from "./fal-stream.ts";
import { ModelInput, SubmitQuery } from "./schemas.ts";

type StreamRequest = {
  principal: Principal;
  params: { owner: string; alias: string; path?: string };
  body: unknown;
  query: { webhook_url?: string; fal_webhook?: string };
  request: Request;
};

const DESCRIPTION =
  "What fal.stream of @fal-ai/client posts (fal.run/{model}/stream, with Accept: text/event-stream). Opens one queue job as POST /v1/queue/{model} does (the same hold, Idempotency-Key), then streams SSE: `status` events in fal's queue-status shape, then an `output` event with the model output (the client's done() resolves to it). A failed or cancelled job sends an `error` event (detail, error_type) and the stream is aborted, so the client raises its ApiError; a refused request (400, 402, 429) is a JSON error with `detail` before any event.";

/** POST /v1/run/{owner}/{alias}[/{path}]/stream: fal's streaming door onto the queue. */
export function falStreamRoutes(ctx: AppContext) {
  async function stream(r: StreamRequest) {
    const { owner, alias, path } = r.params;
    const opened = await openFalStream(
      ctx,
      {
        who: apiOpener(ctx, r.principal),
        modelId: path === undefined ? `${owner}/${alias}` : `${owner}/${alias}/${path}`,
        body: r.body,
        queryWebhook: r.query.webhook_url ?? r.query.fal_webhook ?? null,
        idempotency: claimOf(r.request, r.body),
      },
      r.request.signal,
    );
    return "replay" in opened ? replayResponse(opened.replay) : opened.stream;
  }

  const route = {
    body: ModelInput,
    query: SubmitQuery,
    detail: {
      summary: "Submit and stream (fal)",
      description: DESCRIPTION,
      parameters: [
        {
          name: "Idempotency-Key",
          in: "header" as const,
          required: false,
          schema: { type: "string" as const },
        },
      ],
      responses: {
        200: {
          description: "text/event-stream: status events, then the output (or an error event)",
          content: { "text/event-stream": { schema: { type: "string" as const } } },
        },
        // The error answers, documented with the Error schema (src/docs/openapi.ts, fixOperation);
        // a `response` schema would replace the event-stream 200 above.
        ...Object.fromEntries([400, 401, 402, 409, 429, 503].map((s) => [s, { description: "Error" }])),
      },
    },
  };
  return new Elysia({ prefix: "/v1", detail: { tags: ["fal compatibility"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post("/run/:owner/:alias/stream", stream, route)
    .post("/run/:owner/:alias/:path/stream", stream, route);
}
