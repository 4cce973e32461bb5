import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { claimOf, replayResponse } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import type { AppContext } from "../server/context.ts";
import { CHAT_OPENAPI } from "./openapi.ts";
import { completeChat } from "./service.ts";
import { parseChatBody } from "./validate.ts";

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
};
const JSON_HEADERS = { "content-type": "application/json" };

/** POST /v1/chat/completions: OpenAI's chat format, streamed or not, billed from usage. */
export function chatRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Chat"], security: [{ apiKey: [] }] } }).post(
    "/chat/completions",
    async ({ request, body }) => {
      const principal = await requirePrincipal(ctx, request);
      const req = parseChatBody(body);
      const answer = await completeChat(
        ctx,
        apiOpener(ctx, principal),
        req,
        claimOf(request, body),
        request.signal,
      );
      switch (answer.kind) {
        case "replay": {
          const sse = answer.stored.body.startsWith("data:");
          return replayResponse(
            answer.stored,
            answer.stored.status,
            answer.stored.body,
            sse ? "text/event-stream" : "application/json",
          );
        }
        case "json":
          return new Response(answer.body, { headers: JSON_HEADERS });
        case "stream":
          return new Response(answer.body, { headers: SSE_HEADERS });
      }
    },
    { detail: CHAT_OPENAPI },
  );
}
