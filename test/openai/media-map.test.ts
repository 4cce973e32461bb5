import { describe, expect, test } from "bun:test";
import { resolveModel } from "../../src/catalog/catalog.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { mapImageRequest, mapImageSize, mapSpeechRequest } from "../../src/openai/media-map.ts";

/** OpenAI's parameters made a model's input, read from the model's input_schema (src/openai/media-map.ts). */
const model = (id: string, properties: Record<string, unknown>, kind = "image") =>
  resolveModel(
    {
      id,
      kind,
      unit: kind === "image" ? "image" : "second",
      price_usd_micro: 1000,
      max: 4,
      provider: "sandbox",
      input_schema: { type: "object", properties },
    },
    "test",
  );

const tiers = model("acme/tiers", {
  prompt: { type: "string" },
  image_size: { type: "string", enum: ["square_hd", "square", "landscape_16_9", "portrait_4_3", "640x480"] },
});

function refusal(f: () => unknown): DomainError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("not refused");
}

describe("size", () => {
  test("an image_size tier of the same frame, else the nearest of the same aspect", () => {
    expect(mapImageSize(tiers, "1024x1024")).toEqual({ image_size: "square_hd" });
    expect(mapImageSize(tiers, "512x512")).toEqual({ image_size: "square" });
    expect(mapImageSize(tiers, "256x256")).toEqual({ image_size: "square" });
    expect(mapImageSize(tiers, "1792x1008")).toEqual({ image_size: "landscape_16_9" });
    expect(mapImageSize(tiers, "768x1024")).toEqual({ image_size: "portrait_4_3" });
    expect(mapImageSize(tiers, "1280x960")).toEqual({ image_size: "640x480" });
  });

  test("no tier of that aspect: 400 naming the sizes the model makes", () => {
    const err = refusal(() => mapImageSize(tiers, "1024x1536"));
    expect(err.code).toBe("validation_error");
    expect(err.message).toContain("1024x1024, 512x512, 1024x576, 768x1024, 640x480");
  });

  test("auto and absent leave the model's default; an object image_size takes the frame", () => {
    expect(mapImageSize(tiers, "auto")).toEqual({});
    expect(mapImageSize(tiers, undefined)).toEqual({});
    const free = model("acme/free", { image_size: { type: "object" } });
    expect(mapImageSize(free, "300x200")).toEqual({ image_size: { width: 300, height: 200 } });
  });

  test("width and height within the schema's bounds", () => {
    const wh = model("acme/wh", {
      width: { type: "integer", minimum: 256, maximum: 1536 },
      height: { type: "integer", minimum: 256, maximum: 1536 },
    });
    expect(mapImageSize(wh, "1536x256")).toEqual({ width: 1536, height: 256 });
    expect(refusal(() => mapImageSize(wh, "2048x2048")).message).toContain("256x256 to 1536x1536");
  });
});

describe("requests", () => {
  test("images: n, output_format and the ignored parameters", () => {
    const m = model("acme/full", {
      prompt: { type: "string" },
      num_images: { type: "integer" },
      output_format: { type: "string", enum: ["png", "jpeg", "webp"] },
    });
    const mapped = mapImageRequest(m, {
      model: "acme/full",
      prompt: "p",
      n: "3",
      output_format: "webp",
      quality: "hd",
      style: "vivid",
      user: "u1",
      response_format: "b64_json",
      stream: "false",
    });
    expect(mapped).toEqual({
      input: { prompt: "p", num_images: 3, output_format: "webp" },
      responseFormat: "b64_json",
    });
  });

  test("edits: several images go to image_urls when the model has it", () => {
    const m = model("acme/multi", { prompt: { type: "string" }, image_urls: { type: "array" } });
    const mapped = mapImageRequest(m, { prompt: "p" }, { images: ["file_a", "file_b"], mask: null });
    expect(mapped.input).toEqual({ prompt: "p", image_urls: ["file_a", "file_b"] });
    expect(
      refusal(() => mapImageRequest(m, { prompt: "p" }, { images: ["file_a"], mask: "file_m" })).param,
    ).toBe("mask");
  });

  test("speech: voice as {id}, speed where the model has it, a format the model does not declare is not checked", () => {
    const m = model(
      "acme/tts",
      { text: { type: "string" }, voice: { type: "string" }, speed: { type: "number" } },
      "audio",
    );
    expect(
      mapSpeechRequest(m, { input: "hi", voice: { id: "v1" }, speed: 1.25, response_format: "mp3" }),
    ).toEqual({
      text: "hi",
      voice: "v1",
      speed: 1.25,
    });
    const novoice = model("acme/plain-tts", { text: { type: "string" } }, "audio");
    expect(mapSpeechRequest(novoice, { input: "hi", voice: "alloy" })).toEqual({ text: "hi" });
  });
});
