import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { FAL_IMAGE_SIZES } from "../../src/catalog/input-forms.ts";
import { validateModelInput } from "../../src/catalog/validate-input.ts";
import { estimate } from "../../src/pricing/estimate.ts";

/**
 * The value forms clients send, accepted where the meaning is clear (the accepted half; the
 * refused forms are in input-forms-errors.test.ts). Sources: @ai-sdk/fal 3.0.41 src/fal-video-model.ts
 * (`duration: \`${duration}s\``), src/fal-image-model.ts (`image_size: {width, height}` from `size`,
 * names from `aspectRatio`), src/fal-speech-model.ts (`output_format: "url"`).
 */
const catalog = buildCatalog();
const model = (id: string) => catalog.get(id)!;

describe('seconds: 5, "5", "5s"', () => {
  for (const form of [5, "5", "5s", " 5 s ", "5sec", "5 seconds", "5S"]) {
    test(`duration ${JSON.stringify(form)} is 5 seconds, priced as 5`, async () => {
      for (const id of ["sandbox/video", "sandbox/speech", "sandbox/avatar"]) {
        const base =
          id === "sandbox/speech"
            ? { text: "hi" }
            : id === "sandbox/avatar"
              ? { image_url: "file_x" }
              : { prompt: "p" };
        const input = await validateModelInput(model(id), { ...base, duration: form });
        expect(input.duration).toBe(5);
        expect(estimate(model(id), input).price_usd_micro).toBe(
          estimate(model(id), { ...base, duration: 5 }).price_usd_micro,
        );
      }
    });
  }

  test("the caller's object is not changed", async () => {
    const raw = { prompt: "p", duration: "5s" };
    await validateModelInput(model("sandbox/video"), raw);
    expect(raw.duration).toBe("5s");
  });

  test("an operator schema declaring duration as a string keeps the string", async () => {
    const own = buildCatalog([
      {
        id: "acme/clip",
        kind: "video",
        price_usd_micro: 1000,
        max: 10,
        input_schema: { type: "object", properties: { duration: { type: "string", enum: ["5s", "10s"] } } },
      },
    ]).get("acme/clip")!;
    expect((await validateModelInput(own, { duration: "5s" })).duration).toBe("5s");
  });
});

describe('image_size: a fal name, {width, height} or "WxH"', () => {
  for (const [name, [w, h]] of Object.entries(FAL_IMAGE_SIZES)) {
    test(`${name} is ${w}x${h}`, async () => {
      const input = await validateModelInput(model("sandbox/image"), { prompt: "p", image_size: name });
      expect(input).toEqual({ prompt: "p", width: w, height: h });
    });
  }

  test("fal's own figures", () => {
    expect(FAL_IMAGE_SIZES).toEqual({
      square_hd: [1024, 1024],
      square: [512, 512],
      portrait_4_3: [768, 1024],
      portrait_16_9: [576, 1024],
      landscape_4_3: [1024, 768],
      landscape_16_9: [1024, 576],
    });
  });

  test("an object and a WxH string", async () => {
    for (const form of [{ width: 320, height: 240 }, "320x240", "320 X 240"]) {
      const input = await validateModelInput(model("sandbox/image"), { prompt: "p", image_size: form });
      expect([input.width, input.height]).toEqual([320, 240]);
      expect(input.image_size).toBeUndefined();
    }
  });

  test("width and height that agree with image_size are accepted", async () => {
    const input = await validateModelInput(model("sandbox/image"), {
      prompt: "p",
      image_size: "320x240",
      width: 320,
    });
    expect([input.width, input.height]).toEqual([320, 240]);
  });
});

describe("output_format: what the sandbox produces", () => {
  test("image: png, any case", async () => {
    for (const f of ["png", "PNG"]) {
      expect(
        (await validateModelInput(model("sandbox/image"), { prompt: "p", output_format: f })).output_format,
      ).toBe("png");
    }
  });

  test("audio: wav, and fal's delivery mode url (the AI SDK always sends it)", async () => {
    for (const f of ["wav", "url"]) {
      expect(
        (await validateModelInput(model("sandbox/speech"), { text: "t", output_format: f })).output_format,
      ).toBe(f);
    }
  });

  test("the schema documents them", () => {
    const props = (m: string) =>
      (model(m).input_schema as { properties: Record<string, { enum?: string[] }> }).properties;
    expect(props("sandbox/image").output_format?.enum).toEqual(["png"]);
    expect(props("sandbox/speech").output_format?.enum).toEqual(["wav", "url"]);
    expect(props("sandbox/video").output_format).toBeUndefined();
  });
});
