import { replayResponse } from "../idempotency/idempotency.ts";
import type { ChatAnswer } from "./service.ts";

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
};
const JSON_HEADERS = { "content-type": "application/json" };

/**
 * A text call's answer as the HTTP response, for every door that answers through completeChat
 * (chat completions, Responses). A replayed stream is its stored transcript: chat's starts with
 * `data:`, the Responses events with `event:`.
 */
export function answerResponse(answer: ChatAnswer): Response {
  switch (answer.kind) {
    case "replay": {
      const { body } = answer.stored;
      const sse = body.startsWith("data:") || body.startsWith("event:");
      return replayResponse(
        answer.stored,
        answer.stored.status,
        body,
        sse ? "text/event-stream" : "application/json",
      );
    }
    case "json":
      return new Response(answer.body, { headers: JSON_HEADERS });
    case "stream":
      return new Response(answer.body, { headers: SSE_HEADERS });
  }
}
