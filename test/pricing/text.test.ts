import { describe, expect, test } from "bun:test";
import {
  chargeForTextUsage,
  DEFAULT_MAX_TOKENS,
  estimateTextInput,
  priceText,
  reserveText,
} from "../../src/pricing/text.ts";
import { makeModel, sandbox } from "./models.ts";

const chat = sandbox("sandbox/chat"); // 0.50 USD in / 1.50 USD out per 1M tokens, context 32768

describe("priceText", () => {
  test("ceil((in x in_price + out x out_price) / 1e6)", () => {
    // 1000 x 500000 + 200 x 1500000 = 800,000,000 -> 800 exactly
    expect(priceText(chat, 1000, 200)).toBe(800n);
    // 1 x 500000 + 1 x 1500000 = 2,000,000 -> 2
    expect(priceText(chat, 1, 1)).toBe(2n);
    // 3 x 500000 = 1,500,000 -> 1.5 -> 2 (rounded up)
    expect(priceText(chat, 3, 0)).toBe(2n);
  });

  test("the sum is rounded once, not each side", () => {
    // 1 in + 0 out... each side 0.5 -> per-side rounding would give 1 + 1 = 2; the sum 1.0 gives 1.
    const m = makeModel({
      kind: "text",
      input_price_usd_micro: 500_000,
      output_price_usd_micro: 500_000,
      context: 100,
    });
    expect(priceText(m, 1, 1)).toBe(1n);
  });

  test("zero tokens cost 0; bigint counts are accepted", () => {
    expect(priceText(chat, 0, 0)).toBe(0n);
    expect(priceText(chat, 1000n, 200n)).toBe(800n);
  });

  test("a whole million tokens costs exactly the listed price", () => {
    expect(priceText(chat, 1_000_000, 0)).toBe(500_000n);
    expect(priceText(chat, 0, 1_000_000)).toBe(1_500_000n);
  });

  test("safe-integer token counts at the top of the range stay exact", () => {
    const max = Number.MAX_SAFE_INTEGER; // 9007199254740991
    // 9007199254740991 x 500000 / 1e6 = 4503599627370495.5 -> ...496
    expect(priceText(chat, max, 0)).toBe(4_503_599_627_370_496n);
  });
});

describe("estimateTextInput / reserveText", () => {
  test("input and output tokens as given", () => {
    const q = estimateTextInput(chat, { input_tokens: 1000, output_tokens: 200 });
    expect(q).toEqual({
      model_id: "sandbox/chat",
      unit: "1M_tokens",
      input_tokens: 1000,
      output_tokens: 200,
      units: "0.0012",
      input_price_usd_micro: 500_000n,
      output_price_usd_micro: 1_500_000n,
      amount_usd_micro: 800n,
    });
  });

  test("omitted output_tokens reserves the default 4096 completion tokens", () => {
    expect(DEFAULT_MAX_TOKENS).toBe(4096);
    const q = estimateTextInput(chat, { input_tokens: 1000 });
    expect(q.output_tokens).toBe(4096);
    // 1000 x 0.5 + 4096 x 1.5 = 500 + 6144 = 6644
    expect(q.amount_usd_micro).toBe(6644n);
  });

  test("omitted output_tokens is lowered to what is left of the context", () => {
    const q = estimateTextInput(chat, { input_tokens: 30_000 });
    expect(q.output_tokens).toBe(2768);
    expect(estimateTextInput(chat, { input_tokens: 32_768 }).output_tokens).toBe(0);
  });

  test("input + output exactly at the context is accepted", () => {
    expect(estimateTextInput(chat, { input_tokens: 32_000, output_tokens: 768 }).output_tokens).toBe(768);
  });

  test("output_tokens 0 and input_tokens 0 are accepted", () => {
    expect(estimateTextInput(chat, { input_tokens: 0, output_tokens: 0 }).amount_usd_micro).toBe(0n);
  });

  test("reserveText can name the chat endpoint's fields", () => {
    const q = reserveText(chat, 10, 20, { input: "messages", output: "max_tokens" });
    expect(q.amount_usd_micro).toBe(priceText(chat, 10, 20));
  });
});

describe("chargeForTextUsage", () => {
  const hold = estimateTextInput(chat, { input_tokens: 1000, output_tokens: 500 }); // 500 + 750 = 1250

  test("the actual token cost when at or below the reservation", () => {
    expect(hold.amount_usd_micro).toBe(1250n);
    expect(chargeForTextUsage(hold, 1000, 500)).toBe(1250n);
    expect(chargeForTextUsage(hold, 900, 100)).toBe(600n);
    expect(chargeForTextUsage(hold, 0, 0)).toBe(0n);
  });

  test("capped at the reservation when the model reports more tokens than were held", () => {
    expect(chargeForTextUsage(hold, 5000, 500)).toBe(1250n);
  });

  test("priced with the quote's prices, not the model's current ones", () => {
    const frozen = { ...hold, input_price_usd_micro: 1_000_000n };
    expect(chargeForTextUsage(frozen, 10, 0)).toBe(10n);
  });
});
