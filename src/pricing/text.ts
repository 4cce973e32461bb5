import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";
import { ceilDiv, formatQuantity, minBig } from "./arith.ts";
import type { TextQuote } from "./quote.ts";
import { asInput, readInteger } from "./read-input.ts";

/** Completion tokens reserved (and allowed) when a text call does not send max_tokens (spec Limits). */
export const DEFAULT_MAX_TOKENS = 4096;

const TOKENS_PER_MILLION = 1_000_000n;

interface TextPrices {
  input: bigint;
  output: bigint;
}

function textPrices(model: Model): TextPrices {
  if (
    model.kind !== "text" ||
    model.input_price_usd_micro === null ||
    model.output_price_usd_micro === null
  ) {
    throw new Error(`text pricing: ${model.id} is not a priced text model`);
  }
  return { input: BigInt(model.input_price_usd_micro), output: BigInt(model.output_price_usd_micro) };
}

function tokens(value: number | bigint, param: string): bigint {
  // bigint callers (internal) pass already-exact counts; numbers go through the JSON reader's checks.
  if (typeof value === "bigint") {
    if (value < 0n) throw new DomainError("validation_error", `${param} must be at least 0.`, { param });
    return value;
  }
  return readInteger(value, param, { min: 0, max: null, noun: "tokens" });
}

/**
 * Cost of a text call in micro-USD (docs/api.md "Money"):
 * ceil((input_tokens x input_price + output_tokens x output_price) / 1,000,000).
 * The sum is rounded once, not each side, so the cost never exceeds the exact price by
 * a micro-USD or more. Token counts must be non-negative safe integers (validation_error).
 */
export function priceText(model: Model, inputTokens: number | bigint, outputTokens: number | bigint): bigint {
  const p = textPrices(model);
  const inTok = tokens(inputTokens, "input_tokens");
  const outTok = tokens(outputTokens, "output_tokens");
  return ceilDiv(inTok * p.input + outTok * p.output, TOKENS_PER_MILLION);
}

/** Field names used in errors: the estimate says input_tokens/output_tokens, chat says messages/max_tokens. */
export interface TokenParams {
  input: string;
  output: string;
}

/**
 * The reservation of a text call: prompt tokens plus the completion tokens allowed.
 * - maxTokens given: input + maxTokens must fit the model's context (validation_error otherwise).
 * - maxTokens omitted: DEFAULT_MAX_TOKENS, lowered to what is left of the context, as OpenAI does
 *   when max_tokens is absent, so a long prompt is not refused for a limit the client never set.
 * /chat/completions should reserve through this too, so its hold equals the estimate.
 */
export function reserveText(
  model: Model,
  inputTokens: number,
  maxTokens?: number,
  params: TokenParams = { input: "input_tokens", output: "output_tokens" },
): TextQuote {
  const p = textPrices(model);
  const context = model.context === null ? null : BigInt(model.context);
  const inTok = readInteger(inputTokens, params.input, { min: 0, max: null, noun: "tokens" });
  if (context !== null && inTok > context) {
    throw new DomainError(
      "validation_error",
      `The input is ${inTok} tokens, above the context of ${model.id} (${context} tokens).`,
      { param: params.input },
    );
  }
  let outTok: bigint;
  if (maxTokens === undefined) {
    const room = context === null ? BigInt(DEFAULT_MAX_TOKENS) : context - inTok;
    outTok = minBig(room, BigInt(DEFAULT_MAX_TOKENS));
  } else {
    outTok = readInteger(maxTokens, params.output, { min: 0, max: null, noun: "tokens" });
    if (context !== null && inTok + outTok > context) {
      throw new DomainError(
        "validation_error",
        `${params.input} + ${params.output} is ${inTok + outTok} tokens, above the context of ${model.id} ` +
          `(${context} tokens); lower ${params.output} to at most ${context - inTok}.`,
        { param: params.output },
      );
    }
  }
  return {
    model_id: model.id,
    unit: "1M_tokens",
    input_tokens: Number(inTok),
    output_tokens: Number(outTok),
    units: formatQuantity(inTok + outTok, TOKENS_PER_MILLION),
    input_price_usd_micro: p.input,
    output_price_usd_micro: p.output,
    amount_usd_micro: ceilDiv(inTok * p.input + outTok * p.output, TOKENS_PER_MILLION),
  };
}

/**
 * /v1/estimate for a text model: input {input_tokens, output_tokens?}. input_tokens is required
 * (nothing to price without it: unpriceable); output_tokens omitted reserves DEFAULT_MAX_TOKENS,
 * as the chat endpoint does without max_tokens.
 */
export function estimateTextInput(model: Model, input: unknown): TextQuote {
  const fields = asInput(input);
  if (fields.input_tokens === undefined) {
    throw new DomainError("unpriceable", "input_tokens is required to estimate a text model.", {
      param: "input_tokens",
    });
  }
  // Type checks here so a string or float is reported as such, before reserveText's number signature.
  const inTok = Number(
    readInteger(fields.input_tokens, "input_tokens", { min: 0, max: null, noun: "tokens" }),
  );
  const outTok =
    fields.output_tokens === undefined
      ? undefined
      : Number(readInteger(fields.output_tokens, "output_tokens", { min: 0, max: null, noun: "tokens" }));
  return reserveText(model, inTok, outTok);
}

/**
 * The actual charge of a text call (billing rule 5): the cost of the tokens used, capped at the
 * reservation. The cap matters because the prompt is counted before the call and the model
 * reports its own count after; the caller is never charged more than was held.
 */
export function chargeForTextUsage(
  quote: TextQuote,
  inputTokens: number | bigint,
  outputTokens: number | bigint,
): bigint {
  const inTok = tokens(inputTokens, "input_tokens");
  const outTok = tokens(outputTokens, "output_tokens");
  const cost = ceilDiv(
    inTok * quote.input_price_usd_micro + outTok * quote.output_price_usd_micro,
    TOKENS_PER_MILLION,
  );
  return minBig(cost, quote.amount_usd_micro);
}
