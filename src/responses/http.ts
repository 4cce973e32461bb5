import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { answerResponse } from "../chat/answer.ts";
import { claimOf } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import type { AppContext } from "../server/context.ts";
import { RESPONSES_OPENAPI } from "./openapi.ts";
import { createResponse } from "./service.ts";
import { parseResponsesBody } from "./validate.ts";

/** POST /v1/responses: OpenAI's Responses API over the catalog's text models, billed like chat. */
export function responsesRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Chat"], security: [{ apiKey: [] }] } }).post(
    "/responses",
    async function createResponseRoute({ request, body }) {
      const principal = await requirePrincipal(ctx, request);
      const req = parseResponsesBody(body);
      return answerResponse(
        await createResponse(ctx, apiOpener(ctx, principal), req, claimOf(request, body), request.signal),
      );
    },
    { detail: RESPONSES_OPENAPI },
  );
}
