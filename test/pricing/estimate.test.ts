import { describe, expect, test } from "bun:test";
import { estimate } from "../../src/pricing/estimate.ts";
import { makeModel, sandbox } from "./models.ts";

describe("estimate", () => {
  test("media: unit, units, price, resolution and the quote", () => {
    const e = estimate(sandbox("sandbox/video"), { prompt: "x", duration: 4, resolution: "1080p" });
    expect(e.model_id).toBe("sandbox/video");
    expect(e.unit).toBe("second");
    expect(e.units).toBe("4");
    expect(e.price_usd_micro).toBe(320_000n);
    expect(e.resolution).toBe("1080p");
    expect(e.quote.amount_usd_micro).toBe(320_000n);
  });

  test("media without tiers has a null resolution", () => {
    const e = estimate(sandbox("sandbox/image"), { prompt: "x", num_images: 2, resolution: "4k" });
    expect(e.resolution).toBeNull();
    expect(e.price_usd_micro).toBe(20_000n);
  });

  test("megapixel units are an exact decimal", () => {
    const e = estimate(
      sandbox("sandbox/upscale"),
      { image_url: "file_x" },
      { imageSize: () => ({ width: 300, height: 200 }) },
    );
    expect(e.unit).toBe("megapixel");
    expect(e.units).toBe("0.24");
    expect(e.price_usd_micro).toBe(480n);
  });

  test("text: tokens priced per 1M, units in millions of tokens", () => {
    const e = estimate(sandbox("sandbox/chat"), { input_tokens: 2000, output_tokens: 1000 });
    expect(e).toMatchObject({
      model_id: "sandbox/chat",
      unit: "1M_tokens",
      units: "0.003",
      resolution: null,
    });
    expect(e.price_usd_micro).toBe(2500n);
    expect(e.quote.unit).toBe("1M_tokens");
  });

  test("text with a custom model", () => {
    const m = makeModel({
      kind: "text",
      input_price_usd_micro: 3,
      output_price_usd_micro: 7,
      context: 10_000_000,
    });
    // 1,000,000 x 3 + 1,000,000 x 7 = 10,000,000 -> 10
    expect(estimate(m, { input_tokens: 1_000_000, output_tokens: 1_000_000 }).price_usd_micro).toBe(10n);
  });
});
