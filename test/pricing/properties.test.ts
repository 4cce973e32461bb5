import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Model } from "../../src/catalog/model.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { formatMicro } from "../../src/lib/money.ts";
import { MAX_RATE_MICRO, parseRate, usdMicroToRubMicro } from "../../src/pricing/fx.ts";
import { priceMediaInput } from "../../src/pricing/media.ts";
import type { MediaQuote } from "../../src/pricing/quote.ts";
import { chargeForActualQuantity, chargeForActualUnits } from "../../src/pricing/settle.ts";
import { chargeForTextUsage, priceText, reserveText } from "../../src/pricing/text.ts";
import { makeModel } from "./models.ts";

/**
 * Seeded so a run is reproducible: FC_SEED=<n> bun test test/pricing. On failure fast-check's
 * own report prints the seed and the shrunk counterexample path to replay it.
 */
const seed = Number.parseInt(process.env.FC_SEED ?? "", 10);
const FC: fc.Parameters<unknown> = { seed: Number.isSafeInteger(seed) ? seed : 424242, numRuns: 300 };

const MAX_PRICE = 1_000_000_000_000; // the config schema's Micro maximum

// ---------- generators ----------

const price = fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: MAX_PRICE }));
const maxUnits = fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 100_000 }));

/** Either a flat price or 1-4 resolution tiers. */
const pricing = fc.oneof(
  price.map((p) => ({ price_usd_micro: p })),
  fc
    .uniqueArray(fc.constantFrom("480p", "720p", "1080p", "2k", "4k"), { minLength: 1, maxLength: 4 })
    .chain((rs) =>
      fc.array(price, { minLength: rs.length, maxLength: rs.length }).map((ps) => ({
        resolutions: rs,
        resolution_prices_usd_micro: Object.fromEntries(rs.map((r, i) => [r, ps[i]!])),
      })),
    ),
);

type Shape = { kind: string; unit: string; reference_video?: boolean };
const shapes: Shape[] = [
  { kind: "video", unit: "second" },
  { kind: "video", unit: "second", reference_video: true },
  { kind: "avatar", unit: "second" },
  { kind: "audio", unit: "second" },
  { kind: "upscale", unit: "second" },
  { kind: "image", unit: "image" },
  { kind: "upscale", unit: "image" },
  { kind: "image", unit: "megapixel" },
  { kind: "upscale", unit: "megapixel" },
];

/** A random media model, accepted by the real config validation (resolveModel). */
const mediaModel: fc.Arbitrary<Model> = fc
  .record({
    shape: fc.constantFrom(...shapes),
    pricing,
    max: maxUnits,
    def: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ shape, pricing, max, def }) =>
    makeModel({
      ...shape,
      ...pricing,
      max,
      ...(shape.unit === "megapixel" ? {} : { default_units: Math.max(1, Math.ceil(def * max)) }),
    }),
  );

/** A valid input for `model` (within its max), or a random omission of the optional fields. */
function validInput(model: Model): fc.Arbitrary<Record<string, unknown>> {
  const max = model.max!;
  const resolution = model.resolutions
    ? fc.option(fc.constantFrom(...model.resolutions), { nil: undefined })
    : fc.constant(undefined);
  const count = fc.option(fc.integer({ min: 1, max }), { nil: undefined });
  const withRes = (r: string | undefined, rest: Record<string, unknown>) =>
    r === undefined ? rest : { ...rest, resolution: r };
  if (model.unit === "second") {
    if (model.reference_video) {
      return fc
        .tuple(resolution, fc.integer({ min: 1, max }))
        .map(([r, d]) => withRes(r, { video_url: "file_ref", input_duration_sec: d }));
    }
    return fc.tuple(resolution, count).map(([r, d]) => withRes(r, d === undefined ? {} : { duration: d }));
  }
  if (model.unit === "image") {
    return fc.tuple(resolution, count).map(([r, n]) => withRes(r, n === undefined ? {} : { num_images: n }));
  }
  const side = fc.integer({ min: 1, max: 8192 });
  const maxPixels = BigInt(max) * 1_000_000n;
  if (model.kind === "upscale") {
    return fc
      .tuple(resolution, side, side, fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }))
      .filter(([, w, h, s]) => BigInt(w * h) * BigInt((s ?? 2) ** 2) <= maxPixels)
      .map(([r, w, h, s]) => withRes(r, { width: w, height: h, ...(s === undefined ? {} : { scale: s }) }));
  }
  return fc
    .tuple(resolution, side, side, fc.integer({ min: 1, max: 16 }))
    .filter(([, w, h, n]) => BigInt(w) * BigInt(h) * BigInt(n) <= maxPixels)
    .map(([r, w, h, n]) => withRes(r, { width: w, height: h, num_images: n }));
}

const modelAndQuote: fc.Arbitrary<{ model: Model; quote: MediaQuote }> = mediaModel.chain((model) =>
  validInput(model).map((input) => ({ model, quote: priceMediaInput(model, input) })),
);

/** Actual units as a provider may report them: whole, fractional, negative, huge, infinite. */
const actualUnits: fc.Arbitrary<number | bigint> = fc.oneof(
  fc.integer({ min: -5, max: 200_000 }),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  fc.double({ noNaN: true }),
);

const rate = fc.bigInt({ min: 1n, max: MAX_RATE_MICRO });

// ---------- properties ----------

describe("media quotes", () => {
  test("the amount is the exact ceiling of quantity x unit price / per-unit, a non-negative bigint", () => {
    fc.assert(
      fc.property(modelAndQuote, ({ model, quote }) => {
        const a = quote.amount_usd_micro;
        expect(typeof a).toBe("bigint");
        expect(a >= 0n).toBe(true);
        const exact = quote.quantity * quote.unit_price_usd_micro; // x perUnit
        // ceiling: amount x perUnit >= exact, and one micro less would be below it
        expect(a * quote.quantity_per_unit >= exact).toBe(true);
        if (a > 0n) expect((a - 1n) * quote.quantity_per_unit < exact).toBe(true);
        // the quantity respects the model's max
        expect(quote.quantity >= 1n).toBe(true);
        expect(quote.quantity <= BigInt(model.max!) * quote.quantity_per_unit).toBe(true);
      }),
      FC,
    );
  });

  test("the unit price is the model's price, or the chosen tier's (first tier when omitted)", () => {
    fc.assert(
      fc.property(modelAndQuote, ({ model, quote }) => {
        if (model.resolution_prices_usd_micro) {
          expect(quote.resolution).not.toBeNull();
          expect(quote.unit_price_usd_micro).toBe(
            BigInt(model.resolution_prices_usd_micro[quote.resolution!]!),
          );
        } else {
          expect(quote.resolution).toBeNull();
          expect(quote.unit_price_usd_micro).toBe(BigInt(model.price_usd_micro!));
        }
      }),
      FC,
    );
  });

  test("more duration or images never costs less", () => {
    const perCount = mediaModel.filter((m) => m.unit !== "megapixel" && !m.reference_video);
    fc.assert(
      fc.property(
        perCount.chain((m) =>
          fc.tuple(fc.constant(m), fc.integer({ min: 1, max: m.max! }), fc.integer({ min: 1, max: m.max! })),
        ),
        ([m, a, b]) => {
          const field = m.unit === "second" ? "duration" : "num_images";
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const qa = priceMediaInput(m, { [field]: lo }).amount_usd_micro;
          const qb = priceMediaInput(m, { [field]: hi }).amount_usd_micro;
          expect(qa <= qb).toBe(true);
          if (lo < hi && (m.price_usd_micro ?? 1) > 0 && !m.resolutions) expect(qa < qb).toBe(true);
        },
      ),
      FC,
    );
  });

  test("any JSON-ish input either prices or throws an DomainError; never another error", () => {
    const field = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.string({ maxLength: 6 }),
      fc.constant(null),
      fc.boolean(),
      fc.constantFrom(1e20, -0, Number.MAX_SAFE_INTEGER, 2 ** 53, "480p", "720p"),
      fc.array(fc.integer(), { maxLength: 2 }),
    );
    const input = fc.dictionary(
      fc.constantFrom(
        "duration",
        "num_images",
        "width",
        "height",
        "scale",
        "resolution",
        "video_url",
        "input_duration_sec",
        "image_url",
      ),
      field,
    );
    fc.assert(
      fc.property(mediaModel, input, (model, inp) => {
        try {
          const q = priceMediaInput(model, inp, {
            imageSize: (v) => (v.length % 2 ? { width: 100, height: 50 } : null),
          });
          expect(typeof q.amount_usd_micro).toBe("bigint");
          expect(q.amount_usd_micro >= 0n).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(DomainError);
          expect(["validation_error", "unpriceable"]).toContain((e as DomainError).code);
        }
      }),
      { ...FC, numRuns: 1000 },
    );
  });
});

describe("final charges", () => {
  test("chargeForActualUnits never exceeds the quote and is non-negative, for any reported units", () => {
    fc.assert(
      fc.property(modelAndQuote, actualUnits, ({ quote }, a) => {
        const c = chargeForActualUnits(quote, a);
        expect(typeof c).toBe("bigint");
        expect(c >= 0n).toBe(true);
        expect(c <= quote.amount_usd_micro).toBe(true);
      }),
      FC,
    );
  });

  test("the charge is monotonic in actual units", () => {
    fc.assert(
      fc.property(modelAndQuote, actualUnits, actualUnits, ({ quote }, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(chargeForActualUnits(quote, lo) <= chargeForActualUnits(quote, hi)).toBe(true);
      }),
      FC,
    );
  });

  test("the charge is monotonic in actual pixels/base quantity too", () => {
    const q = fc.bigInt({ min: -10n, max: 200_000_000_000n });
    fc.assert(
      fc.property(modelAndQuote, q, q, ({ quote }, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const clo = chargeForActualQuantity(quote, lo);
        expect(clo <= chargeForActualQuantity(quote, hi)).toBe(true);
        expect(chargeForActualQuantity(quote, hi) <= quote.amount_usd_micro).toBe(true);
      }),
      FC,
    );
  });

  test("delivering everything charges exactly the quote", () => {
    fc.assert(
      fc.property(modelAndQuote, ({ quote }) => {
        expect(chargeForActualQuantity(quote, quote.quantity)).toBe(quote.amount_usd_micro);
        // whole catalog units at or above the quote also charge it in full (clamped)
        const wholeUnits = (quote.quantity + quote.quantity_per_unit - 1n) / quote.quantity_per_unit;
        expect(chargeForActualUnits(quote, wholeUnits)).toBe(quote.amount_usd_micro);
      }),
      FC,
    );
  });

  test("fewer whole units charge exactly those units at the quoted unit price (per-count units)", () => {
    const counted = modelAndQuote.filter(({ quote }) => quote.quantity_per_unit === 1n);
    fc.assert(
      fc.property(counted, fc.nat(), ({ quote }, k) => {
        const n = BigInt(k) % (quote.quantity + 1n);
        expect(chargeForActualUnits(quote, n)).toBe(n * quote.unit_price_usd_micro);
      }),
      FC,
    );
  });
});

describe("currency conversion", () => {
  test("a charge converted to RUB never exceeds its hold converted with the same rate", () => {
    fc.assert(
      fc.property(modelAndQuote, actualUnits, rate, ({ quote }, a, r) => {
        const holdRub = usdMicroToRubMicro(quote.amount_usd_micro, r);
        const chargeRub = usdMicroToRubMicro(chargeForActualUnits(quote, a), r);
        expect(chargeRub <= holdRub).toBe(true);
        expect(chargeRub >= 0n).toBe(true);
      }),
      FC,
    );
  });

  test("conversion is the exact ceiling of usd x rate / 1e6 and monotonic in the amount", () => {
    const usd = fc.bigInt({ min: 0n, max: 2n ** 62n });
    fc.assert(
      fc.property(usd, usd, rate, (a, b, r) => {
        const x = usdMicroToRubMicro(a, r);
        expect(x * 1_000_000n >= a * r).toBe(true);
        if (x > 0n) expect((x - 1n) * 1_000_000n < a * r).toBe(true);
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(usdMicroToRubMicro(lo, r) <= usdMicroToRubMicro(hi, r)).toBe(true);
      }),
      FC,
    );
  });

  test("parseRate reads back any valid rate written as a decimal", () => {
    fc.assert(
      fc.property(rate, (r) => {
        expect(parseRate(formatMicro(r))).toBe(r);
      }),
      FC,
    );
  });
});

describe("text", () => {
  const textModel = fc
    .record({ inP: price, outP: price, context: fc.integer({ min: 1, max: 100_000_000 }) })
    .map(({ inP, outP, context }) =>
      makeModel({ kind: "text", input_price_usd_micro: inP, output_price_usd_micro: outP, context }),
    );
  const tok = fc.oneof(
    fc.integer({ min: 0, max: 10_000 }),
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  );

  test("the cost is the exact ceiling of the per-1M formula", () => {
    fc.assert(
      fc.property(textModel, tok, tok, (m, i, o) => {
        const c = priceText(m, i, o);
        const exact =
          BigInt(i) * BigInt(m.input_price_usd_micro!) + BigInt(o) * BigInt(m.output_price_usd_micro!);
        expect(c * 1_000_000n >= exact).toBe(true);
        if (c > 0n) expect((c - 1n) * 1_000_000n < exact).toBe(true);
      }),
      FC,
    );
  });

  test("the cost is monotonic in input and in output tokens", () => {
    fc.assert(
      fc.property(textModel, tok, tok, tok, tok, (m, i1, i2, o1, o2) => {
        const [il, ih] = i1 <= i2 ? [i1, i2] : [i2, i1];
        const [ol, oh] = o1 <= o2 ? [o1, o2] : [o2, o1];
        expect(priceText(m, il, ol) <= priceText(m, ih, oh)).toBe(true);
        expect(priceText(m, il, oh) <= priceText(m, ih, oh)).toBe(true);
        expect(priceText(m, ih, ol) <= priceText(m, ih, oh)).toBe(true);
      }),
      FC,
    );
  });

  test("usage within the reservation never costs more than it; any usage is charged at most the reservation", () => {
    fc.assert(
      fc.property(
        textModel.chain((m) =>
          fc.record({
            m: fc.constant(m),
            inEst: fc.integer({ min: 0, max: m.context! }),
            maxTok: fc.option(fc.integer({ min: 0, max: 100_000_000 }), { nil: undefined }),
            useIn: fc.double({ min: 0, max: 1, noNaN: true }),
            useOut: fc.double({ min: 0, max: 1, noNaN: true }),
            overIn: fc.nat(),
            overOut: fc.nat(),
          }),
        ),
        ({ m, inEst, maxTok, useIn, useOut, overIn, overOut }) => {
          fc.pre(maxTok === undefined || inEst + maxTok <= m.context!);
          const hold = reserveText(m, inEst, maxTok);
          expect(hold.input_tokens + hold.output_tokens <= m.context!).toBe(true);
          const actualIn = Math.floor(useIn * hold.input_tokens);
          const actualOut = Math.floor(useOut * hold.output_tokens);
          expect(priceText(m, actualIn, actualOut) <= hold.amount_usd_micro).toBe(true);
          expect(chargeForTextUsage(hold, actualIn, actualOut)).toBe(priceText(m, actualIn, actualOut));
          const over = chargeForTextUsage(hold, hold.input_tokens + overIn, hold.output_tokens + overOut);
          expect(over).toBe(hold.amount_usd_micro);
        },
      ),
      FC,
    );
  });
});
