import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { claimOf } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import type { AppContext } from "../server/context.ts";
import { CHAT_OPENAPI } from "./openapi.ts";
import { chatResponse, completeChat } from "./service.ts";
import { parseChatBody } from "./validate.ts";

/** POST /v1/chat/completions: OpenAI's chat format, streamed or not, billed from usage. */
export function chatRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Chat"], security: [{ apiKey: [] }] } }).post(
    "/chat/completions",
    async ({ request, body }) => {
      const principal = await requirePrincipal(ctx, request);
      const req = parseChatBody(body);
      return chatResponse(
        await completeChat(ctx, apiOpener(ctx, principal), req, claimOf(request, body), request.signal),
      );
    },
    { detail: CHAT_OPENAPI },
  );
}
