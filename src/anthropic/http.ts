import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { answerResponse } from "../chat/answer.ts";
import { completeChat } from "../chat/service.ts";
import { doorErrorBody } from "../http/doors.ts";
import { claimOf } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import type { AppContext } from "../server/context.ts";
import { COUNT_TOKENS_OPENAPI, MESSAGES_OPENAPI } from "./openapi.ts";
import { countMessageTokens } from "./service.ts";
import { parseCountTokensBody, parseMessagesBody } from "./validate.ts";
import { anthropicFormat } from "./wire.ts";

/** Mid-stream failures in Anthropic's error shape (what the SDK raises from an `error` event). */
const FORMAT = anthropicFormat((e) => doorErrorBody("anthropic", e));

/**
 * Anthropic's Messages API for its SDKs pointed at gengate (docs/clients.md "Anthropic"): the same
 * chat call as /v1/chat/completions, in Anthropic's request and answer shapes. The key comes in
 * `x-api-key` (requirePrincipal reads it); `anthropic-version` and `anthropic-beta` are ignored.
 */
export function anthropicRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Anthropic"], security: [{ apiKey: [] }] } })
    .post("/messages", createMessage, { detail: MESSAGES_OPENAPI })
    .post("/messages/count_tokens", countTokens, { detail: COUNT_TOKENS_OPENAPI });

  async function createMessage({ request, body }: { request: Request; body: unknown }) {
    const principal = await requirePrincipal(ctx, request);
    const req = parseMessagesBody(body);
    return answerResponse(
      await completeChat(ctx, apiOpener(ctx, principal), req, claimOf(request, body), request.signal, FORMAT),
    );
  }

  async function countTokens({ request, body }: { request: Request; body: unknown }) {
    const principal = await requirePrincipal(ctx, request);
    return countMessageTokens(ctx, principal, parseCountTokensBody(body));
  }
}
