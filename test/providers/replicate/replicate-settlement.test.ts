import { afterAll, describe, expect, test } from "bun:test";
import { createReplicateProvider } from "../../../src/providers/replicate/index.ts";
import { settlementHarness } from "../../queue/settlement-harness.ts";
import { mp3, mp4, png, startMediaHost, wav } from "../media-fixtures.ts";
import { startMockReplicate, TOKEN } from "./mock-replicate.ts";

/**
 * Replicate reports no units at all (its output is a list of URLs), so the settlement counts and
 * measures the files it copied: fewer, smaller or shorter outputs are charged for what they are.
 */
const mock = startMockReplicate();
const cdn = startMediaHost();
const open = { type: "object" }; // lets the test pass mock_output through to the mock
const h = await settlementHarness({
  provider: createReplicateProvider("replicate", {
    type: "replicate",
    baseUrl: mock.url,
    apiKey: TOKEN,
    timeoutMs: 2000,
    concurrency: 2,
    pollIntervalMs: 20,
    workflows: {},
  }),
  providerConfig: { type: "replicate", base_url: mock.url },
  models: [
    {
      id: "r/img",
      kind: "image",
      provider: "replicate",
      upstream_model: "acme/img",
      price_usd_micro: 3000,
      max: 4,
      input_schema: open,
    },
    {
      id: "r/mp",
      kind: "image",
      unit: "megapixel",
      provider: "replicate",
      upstream_model: "acme/mp",
      price_usd_micro: 1000,
      max: 16,
      input_schema: open,
    },
    {
      id: "r/vid",
      kind: "video",
      provider: "replicate",
      upstream_model: "acme/vid",
      price_usd_micro: 100_000,
      max: 10,
      input_schema: open,
    },
    {
      id: "r/tts",
      kind: "audio",
      provider: "replicate",
      upstream_model: "acme/tts",
      price_usd_micro: 1000,
      max: 60,
      input_schema: open,
    },
  ],
});
afterAll(async () => {
  await h.stop();
  mock.stop();
  cdn.stop();
});

describe("replicate settlement", () => {
  test("2 of 4 images: 2 charged", async () => {
    const out = [cdn.put("/1.png", png(32, 32), "image/png"), cdn.put("/2.png", png(32, 32, 2), "image/png")];
    const r = await h.run("r/img", { prompt: "x", num_images: 4, mock_output: out });
    expect(r.status).toBe("COMPLETED");
    expect(r.held).toBe(12_000n);
    expect(r.charged).toBe(6_000n);
    expect(r.invariants).toEqual([]);
  });

  test("per megapixel: two smaller images than requested are charged for their pixels", async () => {
    const out = [
      cdn.put("/s1.png", png(500, 400), "image/png"),
      cdn.put("/s2.png", png(300, 200, 3), "image/png"),
    ];
    const r = await h.run("r/mp", {
      prompt: "x",
      width: 1000,
      height: 1000,
      num_images: 2,
      mock_output: out,
    });
    expect(r.held).toBe(2000n);
    expect(r.charged).toBe(260n); // (200,000 + 60,000) pixels x 1000 / 1e6
    expect(r.units).toBe("0.26");
  });

  test("video: a 3 s MP4 for a 5 s request, with a thumbnail beside it: 3 s charged", async () => {
    const out = {
      video: cdn.put("/v.mp4", mp4(3), "video/mp4"),
      thumbnail: cdn.put("/t.png", png(40, 30), "image/png"),
    };
    const r = await h.run("r/vid", { prompt: "x", duration: 5, mock_output: out });
    expect(r.held).toBe(500_000n);
    expect(r.charged).toBe(300_000n);
  });

  test("speech: a WAV and an MP3 shorter than asked are charged for their length", async () => {
    const w = await h.run("r/tts", {
      text: "x",
      duration: 20,
      mock_output: cdn.put("/a.wav", wav(4), "audio/wav"),
    });
    expect(w.charged).toBe(4000n);
    const m = await h.run("r/tts", {
      text: "x",
      duration: 20,
      mock_output: cdn.put("/a.mp3", mp3(6), "audio/mpeg"),
    });
    expect(m.charged).toBe(6000n);
    expect(m.invariants).toEqual([]);
  });

  test("a data: output (as Replicate's client accepts, replicate-javascript index.js) is stored and charged as delivered", async () => {
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
    const out = [
      `data:image/png;base64,${b64(png(48, 48))}`,
      `data:application/octet-stream;base64,${b64(png(48, 48, 2))}`,
    ];
    const r = await h.run("r/img", { prompt: "x", num_images: 3, mock_output: out });
    expect(r.status).toBe("COMPLETED");
    expect(r.held).toBe(9_000n);
    expect(r.charged).toBe(6_000n); // 2 of 3 images delivered
    expect(r.files).toHaveLength(2);
    expect(r.files[1]).toEqual(png(48, 48, 2));
    expect(r.output!.images.map((i: { content_type: string }) => i.content_type)).toEqual([
      "image/png",
      "image/png",
    ]);
    expect(r.invariants).toEqual([]);
  });

  test("a prediction aborted before it started (its deadline passed) fails and charges nothing", async () => {
    const r = await h.run("r/img", { prompt: "x", num_images: 2, fault: "aborted" });
    expect(r.status).toBe("FAILED");
    expect(r.error).toContain("aborted");
    expect(r.error).toContain("before it started");
    expect(r.held).toBe(6_000n);
    expect(r.charged).toBe(0n);
    expect(r.invariants).toEqual([]);
  });

  test("a failed prediction charges nothing", async () => {
    const r = await h.run("r/img", { prompt: "x", fault: "failed" });
    expect(r.status).toBe("FAILED");
    expect(r.error).toMatch(/^The Replicate prediction \S+ failed\.$/);
    expect(r.charged).toBe(0n);
    expect(r.invariants).toEqual([]);
  });
});
