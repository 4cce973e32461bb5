import { afterAll, describe, expect, test } from "bun:test";
import { mockImageModel, openaiMediaHarness } from "./helpers.ts";

/**
 * OpenAI-compatible media: the upstream's images and speech are charged for what they are (count,
 * real pixels, real seconds), not for the n, size or duration the request asked for.
 */
const { h, stop } = await openaiMediaHarness([
  mockImageModel("half"),
  mockImageModel("mp", { unit: "megapixel", upstream_model: "ok", price_usd_micro: 1_000_000 }),
  { id: "oa/tts", kind: "audio", provider: "oa", upstream_model: "tts", price_usd_micro: 1000, max: 30 },
]);
afterAll(stop);

describe("openai media settlement", () => {
  test("2 of 4 images delivered: 2 charged", async () => {
    const r = await h.run("oa/half", { prompt: "x", num_images: 4 });
    expect(r.files.length).toBe(2);
    expect(r.held).toBe(4000n);
    expect(r.charged).toBe(2000n);
    expect(r.invariants).toEqual([]);
  });

  test("per megapixel: 16x16 images for a 64x64 request are charged for 16x16", async () => {
    const r = await h.run("oa/mp", { prompt: "x", width: 64, height: 64, num_images: 2 });
    expect(r.held).toBe(BigInt(64 * 64 * 2));
    expect(r.charged).toBe(BigInt(16 * 16 * 2));
    expect(r.output!.images[0]).toMatchObject({ width: 16, height: 16 });
  });

  test("speech: a 2 s WAV for a 10 s request: 2 s charged", async () => {
    const r = await h.run("oa/tts", { text: "hi", duration: 10 });
    expect(r.held).toBe(10_000n);
    expect(r.charged).toBe(2000n);
    expect(r.output!.audio.duration).toBe(2);
  });
});
