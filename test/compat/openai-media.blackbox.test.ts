import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateImage, generateSpeech } from "ai";
import OpenAI, { toFile } from "openai";
import { sniffImageSize } from "../../src/lib/image-size.ts";
import { wavSeconds } from "../../src/providers/measure.ts";
import { startFunded } from "../helpers/api.ts";

/**
 * OpenAI's images and speech calls from the official clients, pointed at gengate (base URL and key
 * changed, nothing else): the `openai` JS SDK (openai-node src/resources/images.ts: generate posts
 * JSON to /images/generations, edit posts multipart with `image` / `image[]` and `mask` to
 * /images/edits; src/resources/audio/speech.ts posts JSON to /audio/speech and returns the raw
 * Response) and the Vercel AI SDK (@ai-sdk/openai dist/index.js, OpenAIImageModel.doGenerate: JSON
 * with response_format "b64_json", reads data[].b64_json; OpenAISpeechModel.getArgs: response_format
 * "mp3" unless outputFormat is given). Each call is one job: the balance moves by exactly what
 * POST /v1/estimate quotes for the mapped input, and the job is listed by GET /v1/requests.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;

beforeAll(async () => {
  s = await startFunded();
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
afterAll(() => s?.cleanup());

const balance = async () =>
  BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);

async function estimate(model_id: string, input: Record<string, unknown>): Promise<bigint> {
  const res = await s.post("/v1/estimate", { model_id, input });
  expect(res.status).toBe(200);
  return BigInt(((await res.json()) as { price_usd_micro: string }).price_usd_micro);
}

/** Runs `call`, then checks the balance moved by exactly the estimate of `input` and a new job is listed. */
async function billedAsEstimated<T>(
  model: string,
  input: Record<string, unknown>,
  call: () => Promise<T>,
): Promise<T> {
  const price = await estimate(model, input);
  expect(price).toBeGreaterThan(0n);
  const listed = async () =>
    ((await (await s.get("/v1/requests")).json()) as { data: { request_id: string; model_id: string }[] })
      .data;
  const before = await balance();
  const seen = new Set((await listed()).map((r) => r.request_id));
  const out = await call();
  expect(before - (await balance())).toBe(price);
  const fresh = (await listed()).filter((r) => !seen.has(r.request_id));
  expect(fresh.map((r) => r.model_id)).toEqual([model]);
  return out;
}

/** A 64x64 PNG made by the door itself, as a source image for the edits. */
async function sourcePng(): Promise<Buffer> {
  const source = await client.images.generate({
    model: "sandbox/image",
    prompt: "source",
    size: "64x64",
    response_format: "b64_json",
  });
  return Buffer.from(source.data![0]!.b64_json!, "base64");
}

const png = async (url: string) => new Uint8Array(await (await fetch(url)).arrayBuffer());

describe("openai JS SDK: images and speech", () => {
  test("images.generate, url: a signed link to a PNG of the asked size", async () => {
    const r = await billedAsEstimated("sandbox/image", { prompt: "a red fox", width: 256, height: 128 }, () =>
      client.images.generate({
        model: "sandbox/image",
        prompt: "a red fox",
        size: "256x128",
        response_format: "url",
      }),
    );
    expect(r.created).toBeGreaterThan(1_700_000_000);
    expect(r.data).toHaveLength(1);
    expect(r.data![0]!.b64_json).toBeUndefined();
    expect(r.data![0]!.url).toContain("/v1/requests/");
    expect(sniffImageSize(await png(r.data![0]!.url!))).toMatchObject({
      format: "png",
      width: 256,
      height: 128,
    });
  });

  test("images.generate without response_format: both the link and the same bytes (GPT image and dall-e readers alike)", async () => {
    const r = await client.images.generate({ model: "sandbox/image", prompt: "both", size: "64x80" });
    const d = r.data![0]!;
    expect(Buffer.from(d.b64_json!, "base64").equals(Buffer.from(await png(d.url!)))).toBe(true);
    expect(sniffImageSize(Buffer.from(d.b64_json!, "base64"))).toMatchObject({ width: 64, height: 80 });
    expect(r.output_format).toBe("png");
  });

  test("images.generate, b64_json and n = 2: two PNGs of the asked size, read from our stored outputs", async () => {
    const r = await billedAsEstimated(
      "sandbox/image",
      { prompt: "two foxes", num_images: 2, width: 96, height: 64 },
      () =>
        client.images.generate({
          model: "sandbox/image",
          prompt: "two foxes",
          n: 2,
          size: "96x64",
          response_format: "b64_json",
        }),
    );
    expect(r.data).toHaveLength(2);
    for (const d of r.data!) {
      expect(d.url).toBeUndefined();
      expect(sniffImageSize(Buffer.from(d.b64_json!, "base64"))).toMatchObject({
        format: "png",
        width: 96,
        height: 64,
      });
    }
  });

  test("images.edit with an image file and a mask: both stored as uploads, one job", async () => {
    const bytes = await sourcePng();
    const image = await toFile(bytes, "fox.png", { type: "image/png" });
    const mask = await toFile(bytes, "mask.png", { type: "image/png" });
    // The input the edit maps to: the stored uploads are file ids, priced like any image input.
    const r = await billedAsEstimated("sandbox/image", { prompt: "add a hat", width: 128, height: 128 }, () =>
      client.images.edit({ model: "sandbox/image", prompt: "add a hat", image, mask, size: "128x128" }),
    );
    expect(sniffImageSize(await png(r.data![0]!.url!))).toMatchObject({
      format: "png",
      width: 128,
      height: 128,
    });
  });

  test("audio.speech.create: WAV bytes with their content type, the model's default length", async () => {
    const res = await billedAsEstimated(
      "sandbox/speech",
      { text: "Hello from gengate", voice: "alloy" },
      () =>
        client.audio.speech.create({ model: "sandbox/speech", input: "Hello from gengate", voice: "alloy" }),
    );
    expect(res.headers.get("content-type")).toBe("audio/wav");
    const wav = new Uint8Array(await res.arrayBuffer());
    expect(new TextDecoder().decode(wav.subarray(0, 4))).toBe("RIFF");
    expect(new TextDecoder().decode(wav.subarray(8, 12))).toBe("WAVE");
    // sandbox/speech's default_units: 10 seconds, the units the estimate priced.
    expect(wavSeconds(wav)).toBeCloseTo(10, 1);
  });
});

describe("Vercel AI SDK (@ai-sdk/openai): generateImage and generateSpeech", () => {
  const openai = () => createOpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey! });

  test("generateImage with a size: base64 PNG of that size", async () => {
    const { image } = await billedAsEstimated(
      "sandbox/image",
      { prompt: "a lighthouse", width: 320, height: 192 },
      () =>
        generateImage({
          model: openai().image("sandbox/image"),
          prompt: "a lighthouse",
          size: "320x192",
          maxRetries: 0,
        }),
    );
    expect(image.mediaType).toBe("image/png");
    expect(sniffImageSize(image.uint8Array)).toMatchObject({ format: "png", width: 320, height: 192 });
  });

  test("generateImage with an input image (the SDK posts it to /images/edits as multipart)", async () => {
    const bytes = new Uint8Array(await sourcePng());
    const { image } = await billedAsEstimated(
      "sandbox/image",
      { prompt: "add a hat", width: 160, height: 96 },
      () =>
        generateImage({
          model: openai().image("sandbox/image"),
          prompt: { text: "add a hat", images: [bytes] },
          size: "160x96",
          maxRetries: 0,
        }),
    );
    expect(sniffImageSize(image.uint8Array)).toMatchObject({ format: "png", width: 160, height: 96 });
  });

  test("generateSpeech with outputFormat wav (the SDK asks mp3 otherwise, which sandbox/speech cannot make)", async () => {
    const { audio } = await billedAsEstimated("sandbox/speech", { text: "Hi there", voice: "nova" }, () =>
      generateSpeech({
        model: openai().speech("sandbox/speech"),
        text: "Hi there",
        voice: "nova",
        outputFormat: "wav",
        maxRetries: 0,
      }),
    );
    expect(wavSeconds(audio.uint8Array)).toBeCloseTo(10, 1);
  });

  test("generateSpeech without outputFormat: 400 naming wav, nothing charged", async () => {
    const before = await balance();
    const err = await generateSpeech({
      model: openai().speech("sandbox/speech"),
      text: "Hi",
      maxRetries: 0,
    }).catch((e: unknown) => e as Error);
    expect(String(err)).toContain("wav");
    expect(await balance()).toBe(before);
  });
});
