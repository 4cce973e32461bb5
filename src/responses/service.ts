import { checkModelAllowed } from "../catalog/access.ts";
import { type ChatAnswer, type ChatDeps, completeChat } from "../chat/service.ts";
import type { IdempotencyClaim } from "../idempotency/idempotency.ts";
import type { Opener } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import type { ResponsesRequest } from "./validate.ts";
import { responsesFormat } from "./wire.ts";

/** A Responses call is a chat call: the same deps. */
export type ResponsesDeps = ChatDeps;

/**
 * One OpenAI Responses call: the chat call it translates to (src/chat/service.ts completeChat: the
 * same model resolution, quote, hold, upstream call, settlement, Idempotency-Key and failure rules),
 * answered as a response object or Responses events. A media model is 400 naming the door that
 * runs it, where the chat door answers unknown_model.
 */
export async function createResponse(
  ctx: ResponsesDeps,
  who: Opener,
  req: ResponsesRequest,
  claim: IdempotencyClaim | null,
  clientSignal: AbortSignal,
): Promise<ChatAnswer> {
  // Before the kind check: a key's allowed_models refuses a media model here too (403, not 400).
  checkModelAllowed(who, req.chat.model);
  const model = ctx.catalog.get(req.chat.model);
  if (model && model.kind !== "text") {
    throw new DomainError(
      "validation_error",
      `${model.id} is a ${model.kind} model; POST /v1/responses answers text models. Run it through the queue: POST /v1/queue/${model.id}.`,
      { param: "model" },
    );
  }
  return completeChat(ctx, who, req.chat, claim, clientSignal, responsesFormat(req.echo));
}
