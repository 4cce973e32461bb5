import { describe, expect, test } from "bun:test";
import { priceMediaInput } from "../../src/pricing/media.ts";
import { chargeForActualQuantity, chargeForActualUnits } from "../../src/pricing/settle.ts";
import { makeModel, sandbox } from "./models.ts";

describe("chargeForActualUnits", () => {
  const video = priceMediaInput(sandbox("sandbox/video"), { duration: 8, resolution: "1080p" }); // 8 x 80000

  test("all units delivered charges exactly the quote", () => {
    expect(chargeForActualUnits(video, 8)).toBe(video.amount_usd_micro);
    expect(video.amount_usd_micro).toBe(640_000n);
  });

  test("fewer units charge fewer units at the quoted tier price", () => {
    expect(chargeForActualUnits(video, 3)).toBe(240_000n);
    expect(chargeForActualUnits(video, 3n)).toBe(240_000n);
    expect(chargeForActualUnits(video, 0)).toBe(0n);
  });

  test("more units than quoted are clamped to the quote", () => {
    expect(chargeForActualUnits(video, 9)).toBe(640_000n);
    expect(chargeForActualUnits(video, 1_000_000n)).toBe(640_000n);
    expect(chargeForActualUnits(video, Number.POSITIVE_INFINITY)).toBe(640_000n);
  });

  test("negative units charge nothing", () => {
    expect(chargeForActualUnits(video, -3)).toBe(0n);
    expect(chargeForActualUnits(video, -3n)).toBe(0n);
    expect(chargeForActualUnits(video, Number.NEGATIVE_INFINITY)).toBe(0n);
  });

  test("a started unit is billed whole: 4.3 s -> 5 s", () => {
    expect(chargeForActualUnits(video, 4.3)).toBe(400_000n);
    expect(chargeForActualUnits(video, 0.001)).toBe(80_000n);
  });

  test("NaN throws instead of picking an amount", () => {
    expect(() => chargeForActualUnits(video, Number.NaN)).toThrow(RangeError);
  });

  test("per-image quotes", () => {
    const q = priceMediaInput(sandbox("sandbox/image"), { num_images: 4 });
    expect(chargeForActualUnits(q, 2)).toBe(20_000n);
  });

  test("megapixel quotes: units are whole megapixels, clamped to the quoted pixels", () => {
    const q = priceMediaInput(sandbox("sandbox/upscale"), { image_url: "u", width: 1024, height: 1024 }); // 4.194304 MP
    expect(q.amount_usd_micro).toBe(8389n); // 8388.608 -> 8389
    expect(chargeForActualUnits(q, 1)).toBe(2000n);
    expect(chargeForActualUnits(q, 4)).toBe(8000n);
    expect(chargeForActualUnits(q, 5)).toBe(8389n);
  });

  test("the quote's unit price is used, not the model's current price", () => {
    const m = makeModel({ kind: "audio", price_usd_micro: 100, max: 10 });
    const q = priceMediaInput(m, { duration: 10 });
    expect(chargeForActualUnits({ ...q, unit_price_usd_micro: 7n }, 2)).toBe(14n);
  });
});

describe("chargeForActualQuantity", () => {
  test("megapixel quotes settled on actual pixels, with the quote's rounding", () => {
    const q = priceMediaInput(sandbox("sandbox/upscale"), { image_url: "u", width: 1024, height: 1024 });
    expect(chargeForActualQuantity(q, q.quantity)).toBe(q.amount_usd_micro);
    expect(chargeForActualQuantity(q, 1_048_576n)).toBe(2098n);
    expect(chargeForActualQuantity(q, 1n)).toBe(1n);
    expect(chargeForActualQuantity(q, 0n)).toBe(0n);
    expect(chargeForActualQuantity(q, -5n)).toBe(0n);
    expect(chargeForActualQuantity(q, 10n ** 30n)).toBe(q.amount_usd_micro);
  });
});
