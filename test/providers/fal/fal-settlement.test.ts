import { afterAll, describe, expect, test } from "bun:test";
import { createFalProvider } from "../../../src/providers/fal/index.ts";
import { settlementHarness } from "../../queue/settlement-harness.ts";
import { mp4, png, startMediaHost } from "../media-fixtures.ts";
import { settings } from "./helpers.ts";
import { startMockFal } from "./mock-fal.ts";

/**
 * fal: the charge equals what fal delivered, measured from the copied files; fal's declared
 * `width`/`height`/`duration` only fill in what a file cannot tell, and nothing exceeds the hold.
 */
const fal = startMockFal();
const cdn = startMediaHost();
const h = await settlementHarness({
  provider: createFalProvider("fal", settings(fal.url, fal.key)),
  providerConfig: { type: "fal", base_url: fal.url },
  models: [
    {
      id: "f/img",
      kind: "image",
      provider: "fal",
      upstream_model: "fal-ai/img",
      price_usd_micro: 10_000,
      max: 4,
    },
    {
      id: "f/mp",
      kind: "image",
      unit: "megapixel",
      provider: "fal",
      upstream_model: "fal-ai/mp",
      price_usd_micro: 2_000,
      max: 16,
    },
    {
      id: "f/up",
      kind: "upscale",
      unit: "megapixel",
      provider: "fal",
      upstream_model: "fal-ai/up",
      price_usd_micro: 2_000,
      max: 64,
    },
    {
      id: "f/vid",
      kind: "video",
      provider: "fal",
      upstream_model: "fal-ai/vid",
      price_usd_micro: 50_000,
      max: 10,
    },
  ],
});
afterAll(async () => {
  await h.stop();
  fal.stop();
  cdn.stop();
});

describe("fal settlement", () => {
  test("2 of 4 images delivered: 2 images charged", async () => {
    fal.on("fal-ai/img", {
      result: {
        images: [
          { url: cdn.put("/a1.png", png(64, 64), "image/png"), content_type: "image/png" },
          { url: cdn.put("/a2.png", png(64, 64, 2), "image/png"), content_type: "image/png" },
        ],
      },
    });
    const r = await h.run("f/img", { prompt: "x", num_images: 4 });
    expect(r.status).toBe("COMPLETED");
    expect(r.held).toBe(40_000n);
    expect(r.charged).toBe(20_000n);
    expect(r.units).toBe("2");
    expect(r.invariants).toEqual([]);
  });

  test("per megapixel: a smaller image than requested (and than fal declares) is charged for its real pixels", async () => {
    fal.on("fal-ai/mp", {
      result: {
        images: [{ url: cdn.put("/mp.png", png(512, 256), "image/png"), width: 1024, height: 1024 }],
      },
    });
    const r = await h.run("f/mp", { prompt: "x", width: 1024, height: 1024 });
    expect(r.held).toBe(BigInt(Math.ceil((1024 * 1024 * 2000) / 1e6)));
    expect(r.charged).toBe(BigInt(Math.ceil((512 * 256 * 2000) / 1e6)));
    expect(r.units).toBe("0.131072");
    expect(r.output!.images[0]).toMatchObject({ width: 512, height: 256 });
    expect(r.invariants).toEqual([]);
  });

  test("an upscale that returns a smaller image than priced is charged for what it returned", async () => {
    fal.on("fal-ai/up", { result: { image: { url: cdn.put("/up.png", png(600, 400), "image/png") } } });
    const r = await h.run("f/up", {
      image_url: "https://example.com/src.png",
      width: 500,
      height: 500,
      scale: 2,
    });
    expect(r.held).toBe(2000n); // 1000 x 1000 = 1 MP
    expect(r.charged).toBe(480n); // 600 x 400 = 0.24 MP
  });

  test("a bigger image than priced is still charged at most the hold", async () => {
    fal.on("fal-ai/mp", { result: { images: [{ url: cdn.put("/big.png", png(800, 800), "image/png") }] } });
    const r = await h.run("f/mp", { prompt: "x", width: 256, height: 256 });
    expect(r.charged).toBe(r.held);
  });

  test("video: 3 s delivered of 5 s while fal claims 5 s: 3 s charged (the file wins)", async () => {
    fal.on("fal-ai/vid", {
      result: {
        video: { url: cdn.put("/v3.mp4", mp4(3), "video/mp4"), content_type: "video/mp4", duration: 5 },
      },
    });
    const r = await h.run("f/vid", { prompt: "x", duration: 5 });
    expect(r.held).toBe(250_000n);
    expect(r.charged).toBe(150_000n);
    expect(r.units).toBe("3");
    expect(r.output!.video.duration).toBe(3);
  });

  test("a container gengate cannot read: fal's declared duration is used, capped at the hold", async () => {
    const webm = Uint8Array.from([0x1a, 0x45, 0xdf, 0xa3, ...new Array(60).fill(7)]);
    fal.on("fal-ai/vid", {
      result: {
        video: { url: cdn.put("/v.webm", webm, "video/webm"), content_type: "video/webm", duration: 2.4 },
      },
    });
    const r = await h.run("f/vid", { prompt: "x", duration: 5 });
    expect(r.charged).toBe(150_000n); // 2.4 s is 3 started seconds
    fal.on("fal-ai/vid", {
      result: { video: { url: cdn.put("/v2.webm", webm, "video/webm"), content_type: "video/webm" } },
    });
    const unknown = await h.run("f/vid", { prompt: "x", duration: 5 });
    expect(unknown.charged).toBe(unknown.held); // nothing measured nor declared: the request is assumed
    expect(unknown.invariants).toEqual([]);
  });

  test("a request that failed on fal (its stored result a 504 request_timeout) fails at once and charges nothing", async () => {
    fal.on("fal-ai/img", {
      fail: { status: 504, detail: "Request timed out", errorType: "request_timeout" },
    });
    // The model's time limit is 600 s: a stored error taken for "busy" would hold the job (and the
    // user's money) that long, past this harness's 20 s wait.
    const r = await h.run("f/img", { prompt: "x", num_images: 2 });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^fal reports request \S+ failed \(request_timeout\)\.$/);
    expect(r.held).toBe(20_000n);
    expect(r.charged).toBe(0n);
    expect(r.invariants).toEqual([]);
  });

  test("a FAILED status charges nothing", async () => {
    fal.on("fal-ai/img", { finalStatus: { status: "FAILED", error: "Out of memory" } });
    const r = await h.run("f/img", { prompt: "x" });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^fal reports request \S+ failed\.$/);
    expect(r.charged).toBe(0n);
    expect(r.invariants).toEqual([]);
  });
});
