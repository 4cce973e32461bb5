import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { validateModelInput } from "../../src/catalog/validate-input.ts";
import { DomainError } from "../../src/lib/errors.ts";

/** The value forms whose meaning is not clear: 400 validation_error naming the accepted forms. */
const catalog = buildCatalog();
const model = (id: string) => catalog.get(id)!;

async function refusal(id: string, input: Record<string, unknown>): Promise<DomainError> {
  try {
    await validateModelInput(model(id), input);
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

describe("refused seconds", () => {
  for (const form of ["5.5s", "five", "5m", "-5", "", "5s5", true, [5], { s: 5 }, null]) {
    test(`duration ${JSON.stringify(form)}`, async () => {
      const e = await refusal("sandbox/video", { prompt: "p", duration: form });
      expect(e.code).toBe("validation_error");
      expect(e.param).toBe("input.duration");
      expect(e.message).toContain('5, "5" or "5s"');
    });
  }

  test("a number keeps the schema's checks: 5.5 and 11 (above the max) are refused", async () => {
    expect((await refusal("sandbox/video", { prompt: "p", duration: 5.5 })).message).toContain("integer");
    expect((await refusal("sandbox/video", { prompt: "p", duration: "11s" })).message).toContain("<= 10");
    expect((await refusal("sandbox/video", { prompt: "p", duration: "0" })).message).toContain(">= 1");
  });
});

describe("refused image_size", () => {
  for (const form of [
    "square_huge",
    "16:9",
    "320x",
    "320x240x2",
    { width: 320 },
    { width: 320, height: "240" },
    { width: 1, height: 2, depth: 3 },
    512,
    [320, 240],
  ]) {
    test(`image_size ${JSON.stringify(form)}`, async () => {
      const e = await refusal("sandbox/image", { prompt: "p", image_size: form });
      expect(e.param).toBe("input.image_size");
      expect(e.message).toContain(
        "square_hd, square, portrait_4_3, portrait_16_9, landscape_4_3, landscape_16_9",
      );
      expect(e.message).toContain('"WxH"');
    });
  }

  test("image_size and a width that disagree", async () => {
    const e = await refusal("sandbox/image", { prompt: "p", image_size: "square", width: 300 });
    expect(e.param).toBe("input.image_size");
    expect(e.message).toContain("512x512 but width is 300");
  });

  test("a size out of the model's range is the schema's refusal", async () => {
    const e = await refusal("sandbox/image", { prompt: "p", image_size: "32x32" });
    expect(e.message).toContain(">= 64");
  });

  test("image_size on a model without width/height is not a field of it", async () => {
    const e = await refusal("sandbox/speech", { text: "t", image_size: "square" });
    expect(e.message).toContain("is not a field of this model");
  });
});

describe("refused output_format", () => {
  test("image: jpeg, webp (the sandbox encodes PNG only), naming png", async () => {
    for (const f of ["jpeg", "jpg", "webp", 1]) {
      const e = await refusal("sandbox/image", { prompt: "p", output_format: f });
      expect(e.param).toBe("input.output_format");
      expect(e.message).toContain("must be one of png");
    }
  });

  test("audio: mp3, hex, naming wav and url", async () => {
    for (const f of ["mp3", "hex", "opus"]) {
      const e = await refusal("sandbox/speech", { text: "t", output_format: f });
      expect(e.message).toContain("must be one of wav, url");
    }
  });

  test("video has no output_format", async () => {
    const e = await refusal("sandbox/video", { prompt: "p", output_format: "mp4" });
    expect(e.message).toContain("is not a field of this model");
  });

  test("any other enum names its values", async () => {
    const e = await refusal("sandbox/video", { prompt: "p", aspect_ratio: "4:3" });
    expect(e.message).toContain('must be one of "16:9", "9:16", "1:1"');
  });
});
