import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { billedSeconds, type DeliveredOutput, priceDelivery } from "../../src/pricing/delivered.ts";
import { priceMediaInput } from "../../src/pricing/media.ts";

const catalog = buildCatalog([
  { id: "a/img", kind: "image", price_usd_micro: 10_000, max: 4 },
  { id: "a/mp", kind: "image", unit: "megapixel", price_usd_micro: 2_000, max: 16 },
  { id: "a/vid", kind: "video", price_usd_micro: 50_000, max: 10 },
]);
const quote = (id: string, input: Record<string, unknown>) => priceMediaInput(catalog.get(id)!, input);
const image = (width: number | null, height: number | null): DeliveredOutput => ({
  width,
  height,
  duration: null,
  still: true,
});
const clip = (duration: number | null, still = false): DeliveredOutput => ({
  width: null,
  height: null,
  duration,
  still,
});

describe("priceDelivery: the charge is the price of what was delivered", () => {
  test("per image: the delivered count", () => {
    const q = quote("a/img", { num_images: 4 });
    expect(priceDelivery(q, [image(1, 1), image(1, 1)])).toMatchObject({
      quantity: 2n,
      units: "2",
      amount_usd_micro: 20_000n,
    });
    expect(priceDelivery(q, Array(6).fill(image(1, 1))).amount_usd_micro).toBe(q.amount_usd_micro);
  });

  test("per megapixel: the sum of real pixels, the quote's rounding, capped at the quote", () => {
    const q = quote("a/mp", { width: 1024, height: 1024, num_images: 2 });
    const d = priceDelivery(q, [image(512, 512), image(1000, 1000)]);
    expect(d.quantity).toBe(512n * 512n + 1_000_000n);
    expect(d.amount_usd_micro).toBe((d.quantity * 2000n + 999_999n) / 1_000_000n);
    expect(priceDelivery(q, [image(4000, 4000)]).amount_usd_micro).toBe(q.amount_usd_micro);
  });

  test("per second: the longest clip in started seconds; stills count 0", () => {
    const q = quote("a/vid", { duration: 5 });
    expect(priceDelivery(q, [clip(3)]).amount_usd_micro).toBe(150_000n);
    expect(priceDelivery(q, [clip(2.01)]).units).toBe("3");
    expect(priceDelivery(q, [clip(null, true), clip(4)]).units).toBe("4");
    expect(priceDelivery(q, [clip(null, true)]).amount_usd_micro).toBe(0n);
    expect(priceDelivery(q, [clip(5.04)]).amount_usd_micro).toBe(q.amount_usd_micro);
  });

  test("unknown units assume the request; only then may the provider's claim lower them", () => {
    const q = quote("a/vid", { duration: 5 });
    expect(priceDelivery(q, [clip(null)])).toMatchObject({
      assumed: true,
      amount_usd_micro: q.amount_usd_micro,
    });
    expect(priceDelivery(q, [clip(null)], 2.2).units).toBe("3");
    // A measured delivery ignores the claim, whichever way it points.
    expect(priceDelivery(q, [clip(4)], 1).units).toBe("4");
    expect(priceDelivery(q, [clip(2)], 5).units).toBe("2");
    const mp = quote("a/mp", { width: 1000, height: 1000 });
    expect(priceDelivery(mp, [image(null, null)], 0).amount_usd_micro).toBe(0n);
  });

  test("billedSeconds: a started second counts, float noise below a millisecond does not", () => {
    expect(billedSeconds(4)).toBe(4n);
    expect(billedSeconds(4.0000001)).toBe(4n);
    expect(billedSeconds(4.001)).toBe(5n);
    expect(billedSeconds(0.2)).toBe(1n);
    expect(billedSeconds(0)).toBe(0n);
    expect(billedSeconds(-1)).toBe(0n);
    expect(billedSeconds(Number.NaN)).toBe(0n);
  });
});
