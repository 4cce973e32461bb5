import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { estimatePromptTokens } from "../../src/lib/tokens.ts";
import { chargeForTextUsage, reserveText } from "../../src/pricing/text.ts";

const SEED = Number(process.env.FC_SEED ?? 606);

describe("chat billing properties (seeded)", () => {
  test("for random prompts, limits and reported usage, the charge never exceeds the reservation", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50_000_000 }),
        fc.integer({ min: 0, max: 50_000_000 }),
        fc.integer({ min: 1000, max: 1_000_000 }),
        fc.array(fc.string({ maxLength: 400 }), { minLength: 1, maxLength: 20 }),
        fc.option(fc.integer({ min: 1, max: 8000 })),
        fc.nat(2_000_000),
        fc.nat(2_000_000),
        (inPrice, outPrice, context, texts, maxTokens, usedIn, usedOut) => {
          const model = buildCatalog([
            {
              id: "acme/llm",
              kind: "text",
              input_price_usd_micro: inPrice,
              output_price_usd_micro: outPrice,
              context,
            },
          ]).get("acme/llm")!;
          const prompt = estimatePromptTokens(texts.map((content) => ({ role: "user", content })));
          fc.pre(prompt + (maxTokens ?? 1) <= context);
          const quote = reserveText(model, prompt, maxTokens ?? undefined);
          const charge = chargeForTextUsage(quote, usedIn, usedOut);
          expect(charge).toBeGreaterThanOrEqual(0n);
          expect(charge).toBeLessThanOrEqual(quote.amount_usd_micro);
          // Within the reservation the charge is the exact price of the usage.
          if (usedIn <= quote.input_tokens && usedOut <= quote.output_tokens) {
            const exact =
              (BigInt(usedIn) * BigInt(inPrice) + BigInt(usedOut) * BigInt(outPrice) + 999_999n) / 1_000_000n;
            expect(charge).toBe(exact);
          }
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});
