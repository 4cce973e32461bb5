import type { Principal } from "../accounts/accounts.ts";
import type { Model } from "../catalog/model.ts";
import { ApiError } from "../http/errors.ts";
import { errorFields, log } from "../lib/log.ts";
import { serializeQuote, type TextQuote } from "../pricing/quote.ts";
import { chargeForTextUsage, reserveText } from "../pricing/text.ts";
import type { ChatDelta } from "../providers/chat.ts";
import { ProviderError } from "../providers/types.ts";
import type { JobRow } from "../queue/jobs.ts";
import type { AppContext } from "../server/context.ts";
import { countPromptTokens, countTokens, estimatePromptTokens } from "./tokens.ts";
import type { ChatRequest } from "./validate.ts";

export interface StartedChat {
  job: JobRow;
  quote: TextQuote;
  promptEstimate: number;
}

/**
 * Prices and reserves a chat call before the upstream is asked anything: a conservative prompt
 * estimate plus max_tokens (4096 when missing) over the model's context is 400 validation_error;
 * otherwise the price is held and the call is recorded as a text job (IN_PROGRESS) in one
 * transaction, so it shows in the wallet, spend and GET /v1/requests like any other call.
 */
export async function startChat(
  ctx: AppContext,
  principal: Principal,
  model: Model,
  req: ChatRequest,
): Promise<StartedChat> {
  const promptEstimate =
    model.provider === "sandbox" ? countPromptTokens(req.messages) : estimatePromptTokens(req.messages);
  const quote = reserveText(model, promptEstimate, req.maxTokens, {
    input: "messages",
    output: "max_tokens",
  });
  const serialized = serializeQuote(quote);
  const maxInFlight = principal.maxInFlight ?? ctx.live.limits.inFlight;
  const now = Date.now();
  const deadline = now + model.time_limit_seconds * 1000;
  const id = Bun.randomUUIDv7();
  const job = await ctx.submits.run(() => {
    if (ctx.jobs.openForKey(principal.keyId) >= maxInFlight) {
      throw new ApiError(
        "too_many_in_flight",
        `This key already has ${maxInFlight} open calls; wait for one to finish.`,
        {
          headers: { "retry-after": "1" },
        },
      );
    }
    const hold = ctx.ledger.reserve({
      accountId: principal.accountId,
      keyId: principal.keyId,
      modelId: model.id,
      requestId: id,
      source: "API",
      quotedUsdMicro: quote.amount_usd_micro,
    });
    return ctx.jobs.insert({
      id,
      accountId: principal.accountId,
      keyId: principal.keyId,
      modelId: model.id,
      kind: "text",
      source: "API",
      provider: model.provider,
      input: JSON.stringify({ messages: req.messages, max_tokens: quote.output_tokens }),
      quote: serialized,
      holdId: hold.id,
      webhookUrl: null,
      deadlineAt: deadline,
      createdAt: now,
      runningUntil: deadline, // the request's own time limit ends it at the same moment
    });
  });
  return { job, quote, promptEstimate };
}

export interface ChatOutcome {
  content: string;
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/**
 * Settles a chat call: the upstream's usage (or, if it sent none, our counts: the prompt estimate and
 * the reply's tokens) priced per 1M tokens and capped at the reservation. COMPLETED, charge <= hold.
 */
export function finishChat(ctx: AppContext, started: StartedChat, outcome: ChatOutcome): void {
  const charge = chargeForTextUsage(
    started.quote,
    outcome.usage.prompt_tokens,
    outcome.usage.completion_tokens,
  );
  const completed = ctx.jobs.complete(
    started.job.id,
    { text: outcome.content, finish_reason: outcome.finishReason, usage: outcome.usage },
    [],
    charge,
    String(outcome.usage.prompt_tokens + outcome.usage.completion_tokens),
    ctx.live.files.retentionMs,
    Date.now(),
  );
  // Only the deadline sweep can close a chat job first (it released the hold): the reply is sent,
  // uncharged, and the operator sees why.
  if (!completed)
    log("warn", "chat reply finished after its job was closed; not charged", {
      request_id: started.job.id,
    });
}

/** A failure before the call completed: FAILED, the hold released, nothing charged. */
export function failChat(ctx: AppContext, started: StartedChat, err: unknown): ApiError {
  const message = err instanceof ProviderError ? err.message : "The upstream call failed.";
  if (!(err instanceof ProviderError))
    log("error", "chat provider error", { request_id: started.job.id, ...errorFields(err) });
  ctx.jobs.fail(
    started.job.id,
    err instanceof ProviderError && err.kind === "capacity" ? "capacity_unavailable" : "submit_failed",
    message,
    Date.now(),
  );
  if (err instanceof ProviderError && err.kind === "capacity") {
    return new ApiError("capacity_unavailable", `${message} Nothing was charged; retry later.`, {
      headers: { "retry-after": String(Math.max(1, Math.ceil((err.retryAfterMs ?? 2000) / 1000))) },
      extra: { request_id: started.job.id },
    });
  }
  return new ApiError("submit_failed", `${message} Nothing was charged.`, {
    extra: { request_id: started.job.id },
  });
}

/** Usage to bill when the upstream sent none: our prompt estimate and the reply's counted tokens. */
export function fallbackUsage(started: StartedChat, content: string) {
  return { prompt_tokens: started.promptEstimate, completion_tokens: countTokens(content) };
}

export type { ChatDelta };
