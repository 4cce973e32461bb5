import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { createFal } from "@ai-sdk/fal";
import { createDownload, experimental_generateVideo, generateImage, generateSpeech } from "ai";
import { bytesSource, measureMedia } from "../../src/providers/measure.ts";
import { startFunded } from "../helpers/api.ts";
import { aiSdkFalFor } from "../helpers/fal.ts";

/**
 * The AI SDK's fal provider (@ai-sdk/fal 3.0.41, ai 7.0.173) against gengate, as docs/clients.md
 * tells users to set it up. What it sends (node_modules/@ai-sdk/fal/src/): images POST
 * `{baseURL}/{model}` with `image_size: {width, height}` from `size` (fal-image-model.ts); speech
 * POSTs `https://fal.run/{model}` with `output_format: "url"` (fal-speech-model.ts) and video
 * `https://queue.fal.run/fal-ai/{model}` with `duration: "<n>s"`, then polls the submit's
 * response_url until it stops answering 400 "Request is still in progress" (fal-video-model.ts):
 * those two ignore `baseURL`, so a `fetch` moves them. Every output is downloaded from the URL in
 * the answer; the SDK refuses loopback and private addresses there unless the URL is on `baseURL`'s
 * origin (provider-utils validate-download-url.ts), hence a public_url with a host name, as a real
 * server has (aiSdkFalFor, test/helpers/fal.ts).
 */
const PUBLIC = "http://gengate.test";
let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof createFal>;
let falFetch: typeof fetch;

beforeAll(async () => {
  s = await startFunded("", "100", { GENGATE_PUBLIC_URL: PUBLIC });
  ({ fal, falFetch } = aiSdkFalFor(s.url, PUBLIC, s.defaultKey!));
});
afterAll(() => s.cleanup());

const balance = async () =>
  BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);
const estimate = async (model_id: string, input: Record<string, unknown>) =>
  BigInt(
    ((await (await s.post("/v1/estimate", { model_id, input })).json()) as { price_usd_micro: string })
      .price_usd_micro,
  );
const lastRequest = async () =>
  (
    (await (await s.get("/v1/requests?limit=1")).json()) as {
      data: { request_id: string; model_id: string }[];
    }
  ).data[0]!;
const measured = (bytes: Uint8Array) => measureMedia(bytesSource(bytes));

describe("@ai-sdk/fal against gengate", () => {
  test("generateImage with size: a PNG of that size; charged the estimate", async () => {
    const price = await estimate("sandbox/image", {
      prompt: "a fox",
      image_size: { width: 320, height: 240 },
    });
    expect(price).toBe(await estimate("sandbox/image", { prompt: "a fox", width: 320, height: 240 }));
    const before = await balance();
    const { image } = await generateImage({
      model: fal.image("sandbox/image"),
      prompt: "a fox",
      size: "320x240",
      maxRetries: 0,
    });
    expect(image.mediaType).toBe("image/png");
    const m = measured(image.uint8Array);
    expect([m.width, m.height, m.still]).toEqual([320, 240, true]);
    expect(before - (await balance())).toBe(price);
    expect((await lastRequest()).model_id).toBe("sandbox/image");
  });

  test("generateImage with a fal size name (aspectRatio 16:9 is landscape_16_9, 1024x576)", async () => {
    const { image } = await generateImage({
      model: fal.image("sandbox/image"),
      prompt: "wide",
      aspectRatio: "16:9",
      maxRetries: 0,
    });
    const m = measured(image.uint8Array);
    expect([m.width, m.height]).toEqual([1024, 576]);
  });

  test("generateSpeech: WAV audio of the asked length; charged the estimate", async () => {
    const price = await estimate("sandbox/speech", {
      text: "hello there",
      duration: 3,
      output_format: "url",
    });
    const before = await balance();
    const { audio } = await generateSpeech({
      model: fal.speech("sandbox/speech"),
      text: "hello there",
      providerOptions: { fal: { duration: 3 } },
      maxRetries: 0,
    });
    expect(audio.mediaType).toBe("audio/wav");
    expect(measured(audio.uint8Array).duration).toBe(3);
    expect(before - (await balance())).toBe(price);
    expect((await lastRequest()).model_id).toBe("sandbox/speech");
  });

  test('generateVideo with duration: a WebM of that length, sent as "2s", charged as 2 seconds', async () => {
    const price = await estimate("sandbox/video", { prompt: "waves", duration: "2s" });
    expect(price).toBe(await estimate("sandbox/video", { prompt: "waves", duration: 2 }));
    const before = await balance();
    const { video } = await experimental_generateVideo({
      // The same interface from two copies of @ai-sdk/provider (ai's and @ai-sdk/fal's): a type cast only.
      model: fal.video("sandbox/video") as unknown as Parameters<
        typeof experimental_generateVideo
      >[0]["model"],
      prompt: "waves",
      duration: 2,
      poll: { intervalMs: 100, timeoutMs: 60_000 },
      download: createDownload({ fetch: falFetch }),
      maxRetries: 0,
    });
    expect(video.mediaType).toBe("video/webm");
    expect(measured(video.uint8Array).duration).toBe(2);
    expect(before - (await balance())).toBe(price);
    expect((await lastRequest()).model_id).toBe("sandbox/video");
  });
});
