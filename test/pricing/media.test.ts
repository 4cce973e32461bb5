import { describe, expect, test } from "bun:test";
import { priceMediaInput } from "../../src/pricing/media.ts";
import { makeModel, sandbox } from "./models.ts";

describe("per second", () => {
  test("sandbox/video: duration x tier price", () => {
    const q = priceMediaInput(sandbox("sandbox/video"), { prompt: "x", duration: 7, resolution: "720p" });
    expect(q).toEqual({
      model_id: "sandbox/video",
      unit: "second",
      quantity: 7n,
      quantity_per_unit: 1n,
      units: "7",
      resolution: "720p",
      unit_price_usd_micro: 40_000n,
      amount_usd_micro: 280_000n,
    });
  });

  test("each tier has its own unit price", () => {
    const m = sandbox("sandbox/video");
    const at = (resolution: string) => priceMediaInput(m, { duration: 3, resolution }).amount_usd_micro;
    expect(at("480p")).toBe(60_000n);
    expect(at("720p")).toBe(120_000n);
    expect(at("1080p")).toBe(240_000n);
  });

  test("omitted resolution prices at the first listed tier", () => {
    const q = priceMediaInput(sandbox("sandbox/video"), { duration: 2 });
    expect(q.resolution).toBe("480p");
    expect(q.amount_usd_micro).toBe(40_000n);
    const reordered = makeModel({
      kind: "video",
      max: 10,
      resolutions: ["1080p", "480p"],
      resolution_prices_usd_micro: { "480p": 1, "1080p": 9 },
    });
    const r = priceMediaInput(reordered, { duration: 2 });
    expect(r.resolution).toBe("1080p");
    expect(r.amount_usd_micro).toBe(18n);
  });

  test("omitted duration uses default_units, not max", () => {
    const q = priceMediaInput(sandbox("sandbox/video"), { prompt: "x" });
    expect(q.quantity).toBe(5n); // default_units 5, max 10
    expect(q.amount_usd_micro).toBe(100_000n);
    expect(priceMediaInput(sandbox("sandbox/speech"), { text: "hi" }).amount_usd_micro).toBe(50_000n);
    expect(priceMediaInput(sandbox("sandbox/avatar"), { image_url: "u" }).amount_usd_micro).toBe(150_000n);
  });

  test("a model without default_units defaults to 1 (resolveModel's default)", () => {
    const m = makeModel({ kind: "audio", price_usd_micro: 7, max: 30 });
    expect(priceMediaInput(m, {}).quantity).toBe(1n);
  });

  test("duration at the bounds 1 and max is accepted", () => {
    const m = sandbox("sandbox/avatar");
    expect(priceMediaInput(m, { duration: 1 }).amount_usd_micro).toBe(30_000n);
    expect(priceMediaInput(m, { duration: 60 }).amount_usd_micro).toBe(1_800_000n);
  });

  test("upscale-video and audio models are priced per second", () => {
    const up = makeModel({
      kind: "upscale",
      unit: "second",
      price_usd_micro: 12_345,
      max: 120,
      default_units: 10,
    });
    expect(priceMediaInput(up, { video_url: "https://x/v.mp4", duration: 33 }).amount_usd_micro).toBe(
      407_385n,
    );
    expect(priceMediaInput(up, { video_url: "https://x/v.mp4" }).amount_usd_micro).toBe(123_450n);
    expect(priceMediaInput(sandbox("sandbox/speech"), { text: "a", duration: 300 }).amount_usd_micro).toBe(
      1_500_000n,
    );
  });

  test("a free model prices at 0", () => {
    const m = makeModel({ kind: "video", price_usd_micro: 0, max: 5 });
    expect(priceMediaInput(m, { duration: 5 }).amount_usd_micro).toBe(0n);
  });

  test("the largest configurable price x max stays exact (no float rounding)", () => {
    const m = makeModel({ kind: "video", price_usd_micro: 1_000_000_000_000, max: 100_000 });
    expect(priceMediaInput(m, { duration: 99_999 }).amount_usd_micro).toBe(99_999_000_000_000_000n);
  });
});

describe("reference-to-video", () => {
  const ref = makeModel({
    kind: "video",
    price_usd_micro: 50_000,
    max: 15,
    default_units: 5,
    reference_video: true,
  });

  test("given a video_url, input_duration_sec sets the units and duration does not", () => {
    const q = priceMediaInput(ref, {
      prompt: "x",
      video_url: "file_abc",
      input_duration_sec: 12,
      duration: 3,
    });
    expect(q.quantity).toBe(12n);
    expect(q.amount_usd_micro).toBe(600_000n);
  });

  test("without a video_url it is an ordinary per-second model", () => {
    expect(priceMediaInput(ref, { prompt: "x", duration: 3, input_duration_sec: 12 }).quantity).toBe(3n);
    expect(priceMediaInput(ref, { prompt: "x" }).quantity).toBe(5n);
  });

  test("input_duration_sec at max is accepted", () => {
    expect(priceMediaInput(ref, { video_url: "u", input_duration_sec: 15 }).amount_usd_micro).toBe(750_000n);
  });

  test("a video_url on a model without reference_video does not change its pricing", () => {
    const plain = makeModel({ kind: "video", price_usd_micro: 50_000, max: 15, default_units: 5 });
    expect(priceMediaInput(plain, { video_url: "u", input_duration_sec: 12, duration: 2 }).quantity).toBe(2n);
  });
});

describe("per image", () => {
  test("sandbox/image: num_images x price", () => {
    const m = sandbox("sandbox/image");
    expect(priceMediaInput(m, { prompt: "x", num_images: 3 }).amount_usd_micro).toBe(30_000n);
    expect(priceMediaInput(m, { prompt: "x", num_images: 4 }).units).toBe("4");
  });

  test("omitted num_images uses default_units", () => {
    const m = makeModel({ kind: "image", unit: "image", price_usd_micro: 3_000, max: 8, default_units: 2 });
    const q = priceMediaInput(m, { prompt: "x" });
    expect(q.quantity).toBe(2n);
    expect(q.amount_usd_micro).toBe(6_000n);
  });

  test("per-image upscale is priced per image with default 1", () => {
    const m = makeModel({ kind: "upscale", unit: "image", price_usd_micro: 9_000, max: 1 });
    expect(priceMediaInput(m, { image_url: "u", width: 8000, height: 8000 }).amount_usd_micro).toBe(9_000n);
  });

  test("tiered per-image model", () => {
    const m = makeModel({
      kind: "image",
      unit: "image",
      max: 4,
      resolutions: ["1k", "2k", "4k"],
      resolution_prices_usd_micro: { "1k": 10, "2k": 20, "4k": 40 },
    });
    expect(priceMediaInput(m, { num_images: 3, resolution: "4k" }).amount_usd_micro).toBe(120n);
  });
});

describe("per megapixel", () => {
  const img = makeModel({ kind: "image", unit: "megapixel", price_usd_micro: 2_000, max: 16 });

  test("1024x1024 at 2000 micro/MP = ceil(2000 x 1048576 / 1e6) = 2098", () => {
    const q = priceMediaInput(img, { prompt: "x", width: 1024, height: 1024 });
    expect(q.quantity).toBe(1_048_576n);
    expect(q.quantity_per_unit).toBe(1_000_000n);
    expect(q.units).toBe("1.048576");
    expect(q.amount_usd_micro).toBe(2098n); // exact 2097.152 rounds up
  });

  test("an exact number of megapixels is not rounded", () => {
    expect(priceMediaInput(img, { width: 1000, height: 1000 }).amount_usd_micro).toBe(2000n);
    expect(priceMediaInput(img, { width: 1000, height: 1000 }).units).toBe("1");
    expect(priceMediaInput(img, { width: 2000, height: 250 }).units).toBe("0.5");
  });

  test("rounding is applied once to the total, not per image", () => {
    // 3 images of 1 pixel each at 1 micro/MP: 3 pixels -> ceil(3/1e6) = 1, not 3 x ceil(1/1e6) = 3.
    const cheap = makeModel({ kind: "image", unit: "megapixel", price_usd_micro: 1, max: 1 });
    expect(priceMediaInput(cheap, { width: 1, height: 1, num_images: 3 }).amount_usd_micro).toBe(1n);
    // and a price that lands just above a whole micro rounds up: 333 x 3000 / 1e6 = 0.999 -> 1
    const p = makeModel({ kind: "image", unit: "megapixel", price_usd_micro: 333, max: 1 });
    expect(priceMediaInput(p, { width: 1000, height: 3 }).amount_usd_micro).toBe(1n);
    expect(priceMediaInput(p, { width: 1000, height: 4 }).amount_usd_micro).toBe(2n); // 1.332 -> 2
  });

  test("image models multiply by num_images (default 1)", () => {
    const q = priceMediaInput(img, { width: 1024, height: 768, num_images: 4 });
    expect(q.quantity).toBe(3_145_728n);
    expect(q.amount_usd_micro).toBe(6292n); // 6291.456 -> 6292
  });

  test("total exactly at max megapixels is accepted", () => {
    const m = makeModel({ kind: "image", unit: "megapixel", price_usd_micro: 10, max: 4 });
    expect(priceMediaInput(m, { width: 2000, height: 1000, num_images: 2 }).quantity).toBe(4_000_000n);
  });

  test("sandbox/upscale prices the output: (w x 2) x (h x 2) by default", () => {
    const q = priceMediaInput(sandbox("sandbox/upscale"), {
      image_url: "https://x/a.png",
      width: 512,
      height: 512,
    });
    expect(q.quantity).toBe(1_048_576n);
    expect(q.amount_usd_micro).toBe(2098n);
  });

  test("upscale scale multiplies both sides", () => {
    const q = priceMediaInput(sandbox("sandbox/upscale"), {
      image_url: "u",
      width: 1000,
      height: 500,
      scale: 4,
    });
    expect(q.quantity).toBe(8_000_000n);
    expect(q.amount_usd_micro).toBe(16_000n);
  });

  test("upscale dimensions from the imageSize callback, which gets the image_url value", () => {
    const seen: string[] = [];
    const imageSize = (v: string) => {
      seen.push(v);
      return v === "file_abc" ? { width: 640, height: 480 } : null;
    };
    const q = priceMediaInput(sandbox("sandbox/upscale"), { image_url: "file_abc" }, { imageSize });
    expect(seen).toEqual(["file_abc"]);
    expect(q.quantity).toBe(1280n * 960n);
    expect(q.amount_usd_micro).toBe(2458n); // 2000 x 1.2288 = 2457.6 -> 2458
  });

  test("a measured file wins over declared width/height (a client cannot understate the size)", () => {
    const imageSize = () => ({ width: 2000, height: 2000 });
    const q = priceMediaInput(
      sandbox("sandbox/upscale"),
      { image_url: "file_abc", width: 64, height: 64 },
      { imageSize },
    );
    expect(q.quantity).toBe(16_000_000n);
  });

  test("declared width/height are used when the callback cannot measure the URL", () => {
    const q = priceMediaInput(
      sandbox("sandbox/upscale"),
      { image_url: "https://example.com/a.png", width: 100, height: 100 },
      { imageSize: () => null },
    );
    expect(q.quantity).toBe(40_000n);
  });

  test("tiered per-megapixel model", () => {
    const m = makeModel({
      kind: "image",
      unit: "megapixel",
      max: 10,
      resolutions: ["standard", "hd"],
      resolution_prices_usd_micro: { standard: 1_000, hd: 3_000 },
    });
    expect(priceMediaInput(m, { width: 1024, height: 1024, resolution: "hd" }).amount_usd_micro).toBe(3146n);
  });
});
