import { describe, expect, test } from "bun:test";
import { httpStatus } from "../../src/http/errors.ts";
import { estimate } from "../../src/pricing/estimate.ts";
import { priceMediaInput } from "../../src/pricing/media.ts";
import { chargeForTextUsage, estimateTextInput, priceText, reserveText } from "../../src/pricing/text.ts";
import { expectDomainError, makeModel, sandbox } from "./models.ts";

/** Wrong shapes a JSON client can send for an integer field: [title, value]. */
const NOT_INTEGERS: [string, unknown][] = [
  ['"5"', "5"],
  ["2.5", 2.5],
  ["1e20", 1e20],
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["null", null],
  ["true", true],
  ["[5]", [5]],
  ["{n: 5}", { n: 5 }],
  ["2^53 (unsafe)", 2 ** 53],
];

describe("per second", () => {
  const video = sandbox("sandbox/video");

  test.each(NOT_INTEGERS)("duration %s is a validation_error", (_, duration) => {
    const err = expectDomainError(() => priceMediaInput(video, { duration }), "validation_error", "duration");
    expect(httpStatus(err.code)).toBe(400);
  });

  test.each([[0], [-1], [-0.5], [11], [1_000_000]])("duration %p is outside 1..max", (duration) => {
    const err = expectDomainError(() => priceMediaInput(video, { duration }), "validation_error", "duration");
    expect(err.message).toContain("10"); // names the max
  });

  test("the max in the message is the model's own", () => {
    const err = expectDomainError(
      () => priceMediaInput(sandbox("sandbox/speech"), { duration: 301 }),
      "validation_error",
      "duration",
    );
    expect(err.message).toContain("300");
    expect(err.message).toContain("sandbox/speech");
  });

  test("a non-object input is a validation_error", () => {
    for (const input of [null, undefined, "x", 5, [1, 2]]) {
      expectDomainError(() => priceMediaInput(video, input), "validation_error", "input");
    }
  });
});

describe("resolution tiers", () => {
  const video = sandbox("sandbox/video");

  test.each([["4k"], ["720P"], [""], ["__proto__"], ["constructor"], ["toString"]])(
    "unlisted resolution %p is unpriceable",
    (resolution) => {
      const err = expectDomainError(
        () => priceMediaInput(video, { resolution }),
        "unpriceable",
        "resolution",
      );
      expect(err.message).toContain("480p, 720p, 1080p");
    },
  );

  test.each([[720], [null], [["720p"]]])("non-string resolution %p is a validation_error", (resolution) => {
    expectDomainError(() => priceMediaInput(video, { resolution }), "validation_error", "resolution");
  });
});

describe("tier price lookup", () => {
  test("a tier named like an Object.prototype member needs its own price (resolveModel lets this through)", () => {
    const m = makeModel({
      kind: "video",
      max: 5,
      resolutions: ["toString"],
      resolution_prices_usd_micro: {},
    });
    expect(() => priceMediaInput(m, { duration: 1 })).toThrow(/without a price/);
  });
});

describe("reference-to-video", () => {
  const ref = makeModel({ kind: "video", price_usd_micro: 50_000, max: 15, reference_video: true });

  test("a video_url without input_duration_sec is unpriceable", () => {
    expectDomainError(
      () => priceMediaInput(ref, { video_url: "file_x", duration: 5 }),
      "unpriceable",
      "input_duration_sec",
    );
  });

  test("input_duration_sec above max is a validation_error naming the max", () => {
    const err = expectDomainError(
      () => priceMediaInput(ref, { video_url: "file_x", input_duration_sec: 16 }),
      "validation_error",
      "input_duration_sec",
    );
    expect(err.message).toContain("15");
  });

  test.each([...NOT_INTEGERS, ["0", 0], ["-3", -3]])("input_duration_sec %s is rejected", (_, v) => {
    expectDomainError(
      () => priceMediaInput(ref, { video_url: "u", input_duration_sec: v }),
      "validation_error",
      "input_duration_sec",
    );
  });
});

describe("per image", () => {
  const image = sandbox("sandbox/image");

  test.each([...NOT_INTEGERS, ["0", 0], ["-1", -1], ["5 (> max 4)", 5]])(
    "num_images %s is a validation_error",
    (_, n) => {
      expectDomainError(() => priceMediaInput(image, { num_images: n }), "validation_error", "num_images");
    },
  );
});

describe("per megapixel", () => {
  const img = makeModel({ kind: "image", unit: "megapixel", price_usd_micro: 2_000, max: 4 });
  const upscale = sandbox("sandbox/upscale"); // max 64 MP

  test("image models need width and height to be priced", () => {
    expectDomainError(() => priceMediaInput(img, { height: 512 }), "unpriceable", "width");
    expectDomainError(() => priceMediaInput(img, { width: 512 }), "unpriceable", "height");
    expectDomainError(() => priceMediaInput(img, {}), "unpriceable", "width");
  });

  test.each([...NOT_INTEGERS, ["0", 0], ["-512", -512]])(
    "width/height %s is a validation_error",
    (_, width) => {
      expectDomainError(() => priceMediaInput(img, { width, height: 512 }), "validation_error", "width");
      expectDomainError(
        () => priceMediaInput(img, { width: 512, height: width }),
        "validation_error",
        "height",
      );
    },
  );

  test("num_images of a per-MP model must be a positive integer", () => {
    expectDomainError(
      () => priceMediaInput(img, { width: 10, height: 10, num_images: 0 }),
      "validation_error",
      "num_images",
    );
    expectDomainError(
      () => priceMediaInput(img, { width: 10, height: 10, num_images: "2" }),
      "validation_error",
      "num_images",
    );
  });

  test("total megapixels above max is a validation_error, compared exactly", () => {
    // 4,000,001 pixels > 4 MP by one pixel
    const err = expectDomainError(
      () => priceMediaInput(img, { width: 4_000_001, height: 1 }),
      "validation_error",
    );
    expect(err.message).toContain("4 megapixels");
    expectDomainError(
      () => priceMediaInput(img, { width: 2000, height: 1001, num_images: 2 }),
      "validation_error",
    );
  });

  test("huge dimensions are rejected by the max, not overflowed", () => {
    expectDomainError(
      () =>
        priceMediaInput(img, {
          width: Number.MAX_SAFE_INTEGER,
          height: Number.MAX_SAFE_INTEGER,
          num_images: Number.MAX_SAFE_INTEGER,
        }),
      "validation_error",
    );
  });

  test("upscale above max output megapixels (the output, not the source, counts)", () => {
    // source 4096x4096 = 16.7 MP is under 64; x2 output = 67.1 MP is over
    expectDomainError(
      () => priceMediaInput(upscale, { image_url: "u", width: 4096, height: 4096 }),
      "validation_error",
    );
    expectDomainError(
      () => priceMediaInput(upscale, { image_url: "u", width: 2048, height: 2048, scale: 4 }),
      "validation_error",
    );
  });

  test("upscale without any way to know the source size is unpriceable", () => {
    expectDomainError(() => priceMediaInput(upscale, { image_url: "https://x/a.png" }), "unpriceable");
    expectDomainError(
      () => priceMediaInput(upscale, { image_url: "https://x/a.png" }, { imageSize: () => null }),
      "unpriceable",
    );
    expectDomainError(
      () => priceMediaInput(upscale, { image_url: "u", width: 100 }, { imageSize: () => undefined }),
      "unpriceable",
      "height",
    );
  });

  test("an unreadable measurement from the callback is unpriceable, not a crash", () => {
    for (const size of [
      { width: 0, height: 10 },
      { width: 10.5, height: 10 },
      { width: Number.NaN, height: 10 },
      { width: 10, height: -1 },
    ]) {
      expectDomainError(
        () => priceMediaInput(upscale, { image_url: "file_x" }, { imageSize: () => size }),
        "unpriceable",
        "image_url",
      );
    }
  });

  test("declared dimensions with a wrong type are rejected even when a measurement exists", () => {
    expectDomainError(
      () =>
        priceMediaInput(
          upscale,
          { image_url: "file_x", width: "512" },
          { imageSize: () => ({ width: 1, height: 1 }) },
        ),
      "validation_error",
      "width",
    );
  });

  test.each([[0], [1.5], ["2"], [-2], [null]])("scale %p is a validation_error", (scale) => {
    expectDomainError(
      () => priceMediaInput(upscale, { image_url: "u", width: 10, height: 10, scale }),
      "validation_error",
      "scale",
    );
  });
});

describe("text", () => {
  const chat = sandbox("sandbox/chat");

  test.each([[-1], [1.5], [Number.NaN], [1e20], ["10"], [null], [Number.POSITIVE_INFINITY]])(
    "priceText rejects token count %p",
    (n) => {
      expectDomainError(() => priceText(chat, n as number, 0), "validation_error", "input_tokens");
      expectDomainError(() => priceText(chat, 0, n as number), "validation_error", "output_tokens");
    },
  );

  test("negative bigint tokens are rejected", () => {
    expectDomainError(() => priceText(chat, -1n, 0n), "validation_error", "input_tokens");
  });

  test("estimate needs input_tokens", () => {
    expectDomainError(() => estimateTextInput(chat, { output_tokens: 10 }), "unpriceable", "input_tokens");
    expectDomainError(() => estimateTextInput(chat, "hello"), "validation_error", "input");
  });

  test.each([["1"], [1.5], [-1], [null]])("estimate rejects token field %p", (v) => {
    expectDomainError(() => estimateTextInput(chat, { input_tokens: v }), "validation_error", "input_tokens");
    expectDomainError(
      () => estimateTextInput(chat, { input_tokens: 1, output_tokens: v }),
      "validation_error",
      "output_tokens",
    );
  });

  test("input + output over the context is a validation_error", () => {
    const err = expectDomainError(
      () => estimateTextInput(chat, { input_tokens: 32_000, output_tokens: 769 }),
      "validation_error",
      "output_tokens",
    );
    expect(err.message).toContain("32768");
    expect(err.message).toContain("768"); // says how far to lower it
    expectDomainError(
      () => estimateTextInput(chat, { input_tokens: 32_769 }),
      "validation_error",
      "input_tokens",
    );
  });

  test("chat's field names appear in reserveText errors", () => {
    const params = { input: "messages", output: "max_tokens" };
    expectDomainError(() => reserveText(chat, 40_000, undefined, params), "validation_error", "messages");
    expectDomainError(() => reserveText(chat, 100, 40_000, params), "validation_error", "max_tokens");
  });

  test("chargeForTextUsage validates the reported counts", () => {
    const q = estimateTextInput(chat, { input_tokens: 1 });
    expectDomainError(() => chargeForTextUsage(q, -1, 0), "validation_error", "input_tokens");
    expectDomainError(() => chargeForTextUsage(q, 0, 0.5), "validation_error", "output_tokens");
  });
});

describe("model kind mismatches are caller bugs, not client errors", () => {
  test("media pricing of a text model and text pricing of a media model throw plain Errors", () => {
    const chat = sandbox("sandbox/chat");
    const video = sandbox("sandbox/video");
    expect(() => priceMediaInput(chat, {})).toThrow(/text model/);
    expect(() => priceText(video, 1, 1)).toThrow(/not a priced text model/);
  });

  test("estimate dispatches on kind, so it never hits those", () => {
    expect(estimate(sandbox("sandbox/chat"), { input_tokens: 1 }).unit).toBe("1M_tokens");
    expectDomainError(
      () => estimate(sandbox("sandbox/video"), { duration: 11 }),
      "validation_error",
      "duration",
    );
  });
});
