import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

const post = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
type Err = { error: { code: string; param?: string } };

describe("POST /v1/estimate", () => {
  test("video with a tier and a duration", async () => {
    const t = await makeTestApp();
    const res = await t.request(
      "/v1/estimate",
      post({ model_id: "sandbox/video", input: { duration: 4, resolution: "720p" } }),
    );
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      object: "estimate",
      model_id: "sandbox/video",
      unit: "second",
      units: "4",
      resolution: "720p",
      price_usd_micro: "160000",
      currency: "USD",
    });
  });

  test("omitted duration uses default_units (5 s), not the max", async () => {
    const t = await makeTestApp();
    const e = await json(
      await t.request("/v1/estimate", post({ model_id: "sandbox/video", input: { resolution: "480p" } })),
    );
    expect(e.units).toBe("5");
    expect(e.price_usd_micro).toBe("100000");
  });

  test("text: input/output tokens, rounded up once", async () => {
    const t = await makeTestApp();
    const e = await json(
      await t.request(
        "/v1/estimate",
        post({ model_id: "sandbox/chat", input: { input_tokens: 3, output_tokens: 1 } }),
      ),
    );
    // ceil((3 * 500000 + 1 * 1500000) / 1e6) = 3
    expect(e.price_usd_micro).toBe("3");
  });

  test("RUB accounts also get price_rub_micro at the current rate", async () => {
    const t = await makeTestApp();
    const rub = await t.ctx.accounts.createAccount("rub", "RUB");
    await t.ctx.fx.set("RUB", 92_500_000n, "test");
    const e = await json(
      await t.request("/v1/estimate", {
        ...post({ model_id: "sandbox/image", input: { num_images: 3 } }),
        key: rub.key,
      }),
    );
    expect(e).toMatchObject({
      price_usd_micro: "30000",
      currency: "RUB",
      price_rub_micro: "2775000",
      fx_rate_micro: "92500000",
    });
  });

  test.each([
    ["unknown model", { model_id: "acme/nope", input: {} }, "unknown_model"],
    ["unlisted resolution", { model_id: "sandbox/video", input: { resolution: "4k" } }, "unpriceable"],
    ["duration over max", { model_id: "sandbox/video", input: { duration: 11 } }, "validation_error"],
    ["negative duration", { model_id: "sandbox/video", input: { duration: -1 } }, "validation_error"],
    ["huge num_images", { model_id: "sandbox/image", input: { num_images: 1e20 } }, "validation_error"],
    // "5" and "5s" are 5 seconds (test/catalog/input-forms.test.ts); a string without that meaning is refused.
    [
      "unclear string duration",
      { model_id: "sandbox/speech", input: { duration: "five" } },
      "validation_error",
    ],
    [
      "upscale of a URL without size",
      { model_id: "sandbox/upscale", input: { image_url: "https://example.com/a.png" } },
      "unpriceable",
    ],
    [
      "text over context",
      { model_id: "sandbox/chat", input: { input_tokens: 30000, output_tokens: 5000 } },
      "validation_error",
    ],
    ["missing model_id", { input: {} }, "validation_error"],
    ["input not an object", { model_id: "sandbox/image", input: [1] }, "validation_error"],
    ["extra field", { model_id: "sandbox/image", input: {}, extra: 1 }, "validation_error"],
  ])("%s is a 400 %s", async (_label, body, code) => {
    const t = await makeTestApp();
    const res = await t.request("/v1/estimate", post(body));
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.code).toBe(code);
  });

  test("needs a key", async () => {
    const t = await makeTestApp();
    expect(
      (await t.request("/v1/estimate", { ...post({ model_id: "sandbox/image" }), key: null })).status,
    ).toBe(401);
  });

  test("a RUB account without a rate cannot be priced", async () => {
    const t = await makeTestApp();
    const rub = await t.ctx.accounts.createAccount("rub", "RUB");
    const res = await t.request("/v1/estimate", { ...post({ model_id: "sandbox/image" }), key: rub.key });
    expect((await json<Err>(res)).error.code).toBe("unpriceable");
  });
});
