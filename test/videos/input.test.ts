import { describe, expect, test } from "bun:test";
import { allowedSizes, formFields, frameOf, modelInputOf, sizeOfInput } from "../../src/videos/input.ts";
import { expectDomainError, makeModel, sandbox } from "../pricing/models.ts";

/** OpenAI's video fields as a model's own input (src/videos/input.ts). */
const video = sandbox("sandbox/video");
const avatar = sandbox("sandbox/avatar");
const withSchema = (properties: Record<string, unknown>) =>
  makeModel({
    kind: "video",
    unit: "second",
    price_usd_micro: 1000,
    max: 12,
    input_schema: { type: "object", properties },
  });

describe("sizes", () => {
  test("a tier's frame at an aspect ratio: the short side its lines, the long side rounded to even", () => {
    expect(frameOf("480p", "16:9")).toBe("854x480");
    expect(frameOf("720p", "9:16")).toBe("720x1280");
    expect(frameOf("1080p", "1:1")).toBe("1080x1080");
    expect(frameOf("4k", "16:9")).toBeNull();
    expect(frameOf("720p", "wide")).toBeNull();
  });

  test("sandbox/video: each tier at each aspect ratio, with the fields each size becomes", () => {
    const sizes = allowedSizes(video);
    expect([...sizes.keys()]).toEqual([
      "854x480",
      "480x854",
      "480x480",
      "1280x720",
      "720x1280",
      "720x720",
      "1920x1080",
      "1080x1920",
      "1080x1080",
    ]);
    expect(sizes.get("720x1280")).toEqual({ resolution: "720p", aspect_ratio: "9:16" });
  });

  test("aspect ratios alone are named at 720p; a model with neither takes no size", () => {
    const m = withSchema({
      prompt: { type: "string" },
      aspect_ratio: { type: "string", enum: ["16:9", "9:16"] },
    });
    expect(allowedSizes(m)).toEqual(
      new Map([
        ["1280x720", { aspect_ratio: "16:9" }],
        ["720x1280", { aspect_ratio: "9:16" }],
      ]),
    );
    expect(allowedSizes(avatar).size).toBe(0);
    expectDomainError(() => modelInputOf(avatar, { size: "1280x720" }, null), "validation_error", "size");
  });

  test("the size a job's input stands for: as asked, or the model's defaults", () => {
    expect(sizeOfInput(video, { resolution: "1080p", aspect_ratio: "9:16" })).toBe("1080x1920");
    expect(sizeOfInput(video, {})).toBe("854x480");
    expect(sizeOfInput(avatar, {})).toBeNull();
    expect(sizeOfInput(undefined, { width: 640, height: 360 })).toBe("640x360");
  });

  test("a model with width and height takes the size as sent", () => {
    const m = withSchema({
      prompt: { type: "string" },
      width: { type: "integer" },
      height: { type: "integer" },
    });
    expect(modelInputOf(m, { prompt: "x", size: "640x360" }, null)).toEqual({
      prompt: "x",
      width: 640,
      height: 360,
    });
  });
});

describe("seconds", () => {
  test('"8", "8s" and 8 are 8 seconds; outside 1..max is refused naming seconds', () => {
    for (const s of ["8", "8s", 8])
      expect(modelInputOf(video, { seconds: s }, null)).toEqual({ duration: 8 });
    expectDomainError(() => modelInputOf(video, { seconds: "11" }, null), "validation_error", "seconds");
    expectDomainError(() => modelInputOf(video, { seconds: "0" }, null), "validation_error", "seconds");
    expectDomainError(() => modelInputOf(video, { seconds: "1.5" }, null), "validation_error", "seconds");
  });

  test("a duration the model lists as strings: the listed spelling, or 400 naming them", () => {
    const plain = withSchema({ duration: { type: "string", enum: ["5", "10"] } });
    expect(modelInputOf(plain, { seconds: "5s" }, null)).toEqual({ duration: "5" });
    const suffixed = withSchema({ duration: { type: "string", enum: ["5s", "10s"] } });
    expect(modelInputOf(suffixed, { seconds: "10" }, null)).toEqual({ duration: "10s" });
    const e = expectDomainError(
      () => modelInputOf(suffixed, { seconds: "4" }, null),
      "validation_error",
      "seconds",
    );
    expect(e.message).toContain("5s, 10s");
    const text = withSchema({ duration: { type: "string" } });
    expect(modelInputOf(text, { seconds: 6 }, null)).toEqual({ duration: "6" });
  });
});

describe("prompt, input_reference and other fields", () => {
  test("an avatar says its prompt (text) and animates the reference (image_url)", () => {
    expect(
      modelInputOf(avatar, { model: "sandbox/avatar", prompt: "hello", seconds: "3" }, "file_x"),
    ).toEqual({
      text: "hello",
      duration: 3,
      image_url: "file_x",
    });
  });

  test("input_reference as a string, {file_id} or {image_url}; a sent file wins", () => {
    expect(modelInputOf(video, { input_reference: "file_a" }, null).image_url).toBe("file_a");
    expect(modelInputOf(video, { input_reference: { file_id: "file_b" } }, null).image_url).toBe("file_b");
    expect(
      modelInputOf(video, { input_reference: { image_url: "https://x.test/a.png" } }, null).image_url,
    ).toBe("https://x.test/a.png");
    expect(modelInputOf(video, { input_reference: "file_a" }, "file_c").image_url).toBe("file_c");
    expectDomainError(
      () => modelInputOf(video, { input_reference: {} }, null),
      "validation_error",
      "input_reference",
    );
    const noImage = withSchema({ prompt: { type: "string" } });
    expectDomainError(
      () => modelInputOf(noImage, { input_reference: "file_a" }, null),
      "validation_error",
      "input_reference",
    );
  });

  test("other fields pass through; a model without prompt or text refuses a prompt", () => {
    expect(modelInputOf(video, { prompt: "p", seed: 3 }, null)).toEqual({ prompt: "p", seed: 3 });
    const silent = withSchema({ image_url: { type: "string" } });
    expectDomainError(() => modelInputOf(silent, { prompt: "p" }, null), "validation_error", "prompt");
  });
});

describe("form fields", () => {
  test("bracketed names nest; values take the schema's types", () => {
    const f = formFields(
      [
        ["model", "sandbox/video"],
        ["seconds", "4"],
        ["seed", "7"],
        ["sandbox[delay_ms]", "1500"],
        ["sandbox[fail]", "true"],
        ["input_reference[file_id]", "file_a"],
      ],
      video,
    );
    expect(f).toEqual({
      model: "sandbox/video",
      seconds: "4",
      seed: 7,
      sandbox: { delay_ms: 1500, fail: true },
      input_reference: { file_id: "file_a" },
    });
  });

  test("arrays, and no typing without a model", () => {
    expect(
      formFields(
        [
          ["tags[]", "a"],
          ["tags[]", "b"],
          ["seed", "7"],
        ],
        undefined,
      ),
    ).toEqual({ tags: ["a", "b"], seed: "7" });
  });

  test("refused: prototype keys, names it cannot read, more than 64 fields", () => {
    expectDomainError(() => formFields([["__proto__[x]", "1"]], video), "validation_error");
    expectDomainError(() => formFields([["a[constructor]", "1"]], video), "validation_error");
    expectDomainError(() => formFields([["a]b", "1"]], video), "validation_error");
    expectDomainError(() => formFields([["a[b][c][d][e][f]", "1"]], video), "validation_error");
    const many = Array.from({ length: 65 }, (_, i) => [`f${i}`, "x"] as [string, string]);
    expectDomainError(() => formFields(many, video), "validation_error");
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
