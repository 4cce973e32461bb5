import { describe, expect, test } from "bun:test";
import { buildCatalog, CatalogError } from "../../src/catalog/catalog.ts";
import { json, makeTestApp } from "../helpers/context.ts";

const video = {
  id: "acme/video-pro",
  kind: "video",
  price_usd_micro: 50_000,
  max: 8,
  default_units: 4,
  description: "Acme video",
};

describe("catalog loading", () => {
  test("the built-in catalog has one sandbox model per kind", () => {
    const c = buildCatalog();
    const kinds = c.models.map((m) => `${m.id}:${m.kind}`).sort();
    expect(kinds).toEqual([
      "sandbox/avatar:avatar",
      "sandbox/chat:text",
      "sandbox/image:image",
      "sandbox/speech:audio",
      "sandbox/upscale:upscale",
      "sandbox/video:video",
    ]);
    expect(c.get("sandbox/video")!.resolutions).toEqual(["480p", "720p", "1080p"]);
  });

  test("operator models are added, can replace a sandbox model, and can remove one", () => {
    const c = buildCatalog([
      video,
      { ...video, id: "sandbox/image", kind: "image", price_usd_micro: 99 },
      { id: "sandbox/avatar", kind: "avatar", price_usd_micro: 1, max: 1, enabled: false },
    ]);
    expect(c.get("acme/video-pro")!.price_usd_micro).toBe(50_000);
    expect(c.get("acme/video-pro")!.unit).toBe("second");
    expect(c.get("sandbox/image")!.price_usd_micro).toBe(99);
    expect(c.get("sandbox/avatar")).toBeUndefined();
  });

  test("sandbox = false leaves only operator models", () => {
    const c = buildCatalog([video], { sandbox: false });
    expect(c.models.map((m) => m.id)).toEqual(["acme/video-pro"]);
  });

  const bad: [string, unknown, RegExp][] = [
    ["unknown field", { ...video, prise: 1 }, /models\[0\] \(acme\/video-pro\)\.prise/],
    ["bad kind", { ...video, kind: "hologram" }, /models\[0\] \(acme\/video-pro\)\.kind/],
    ["unit of another kind", { ...video, unit: "image" }, /\.unit: "image" is not a unit of kind video/],
    ["negative price", { ...video, price_usd_micro: -1 }, /\.price_usd_micro/],
    ["fractional price", { ...video, price_usd_micro: 1.5 }, /\.price_usd_micro/],
    ["missing max", { ...video, max: undefined }, /\.max: required/],
    ["default over max", { ...video, default_units: 9 }, /\.default_units: exceeds max/],
    ["missing price", { ...video, price_usd_micro: undefined }, /\.price_usd_micro: required/],
    ["bad id", { ...video, id: "NoSlash" }, /models\[0\] \(NoSlash\)\.id: expected string to match/],
    [
      "tier without price",
      { ...video, price_usd_micro: undefined, resolutions: ["720p"], resolution_prices_usd_micro: {} },
      /resolution_prices_usd_micro: no price for "720p"/,
    ],
    [
      "text without context",
      { id: "acme/llm", kind: "text", input_price_usd_micro: 1, output_price_usd_micro: 1 },
      /models\[0\] \(acme\/llm\)\.context: required/,
    ],
    [
      "text with max",
      {
        id: "acme/llm",
        kind: "text",
        input_price_usd_micro: 1,
        output_price_usd_micro: 1,
        context: 10,
        max: 3,
      },
      /\.max: not used by text models/,
    ],
    ["not an object", "acme/x", /models\[0\]/],
  ];
  test.each(bad)("%s is a start-up error naming the entry and field", (_label, entry, pattern) => {
    expect(() => buildCatalog([entry])).toThrow(CatalogError);
    expect(() => buildCatalog([entry])).toThrow(pattern);
  });

  test("duplicate operator ids are refused", () => {
    expect(() => buildCatalog([video, video])).toThrow(/models\[1\] \(acme\/video-pro\)\.id: duplicate/);
  });

  test("the entry index is the operator's, counting from 0", () => {
    expect(() => buildCatalog([video, { ...video, id: "acme/b", max: 0 }])).toThrow(
      /^models\[1\] \(acme\/b\)\.max/,
    );
  });
});

describe("GET /v1/models", async () => {
  const { request } = await makeTestApp({
    models: [
      {
        id: "acme/llm",
        kind: "text",
        input_price_usd_micro: 3_000_000,
        output_price_usd_micro: 15_000_000,
        context: 200_000,
      },
    ],
  });

  test("lists every model with the contract's fields, money as decimal strings", async () => {
    const res = await request("/v1/models", { key: null });
    expect(res.status).toBe(200);
    const body = await json<{ object: string; data: Record<string, unknown>[] }>(res);
    expect(body.object).toBe("list");
    const byId = Object.fromEntries(body.data.map((m) => [m.id, m]));
    const v = byId["sandbox/video"]!;
    expect(v.kind).toBe("video");
    expect(v.unit).toBe("second");
    expect(v.max).toBe(10);
    expect(v.default_units).toBe(5);
    expect(v.omitted_units).toBe(5);
    expect(v.resolutions).toEqual(["480p", "720p", "1080p"]);
    expect(v.resolution_prices_usd_micro).toEqual({ "480p": "20000", "720p": "40000", "1080p": "80000" });
    expect(typeof v.description).toBe("string");
    expect((v.input_schema as { type: string }).type).toBe("object");
    const img = byId["sandbox/image"]!;
    expect(img.price_usd_micro).toBe("10000");
    const llm = byId["acme/llm"]!;
    expect(llm.unit).toBe("1M_tokens");
    expect(llm.input_price_usd_micro).toBe("3000000");
    expect(llm.output_price_usd_micro).toBe("15000000");
    expect(llm.context).toBe(200_000);
    expect(llm.price_usd_micro).toBeUndefined();
  });

  test("every entry is also an OpenAI model object: object, stable created, owned_by", async () => {
    const first = await json<{ data: Record<string, unknown>[] }>(await request("/v1/models", { key: null }));
    const { request: other } = await makeTestApp();
    const second = await json<{ data: Record<string, unknown>[] }>(await other("/v1/models", { key: null }));
    for (const m of first.data) {
      expect(m.object).toBe("model");
      expect(Number.isInteger(m.created)).toBe(true);
      expect(m.created as number).toBeGreaterThan(1_700_000_000);
      expect(m.owned_by).toBe(String(m.id).split("/")[0]!);
    }
    // Stable: another process (here another app) answers the same created for the same model.
    const created = (b: typeof first) => Object.fromEntries(b.data.map((m) => [m.id, m.created]));
    expect(created(second)["sandbox/chat"]).toBe(created(first)["sandbox/chat"]);
    const one = await json(await request("/v1/models/sandbox/chat", { key: null }));
    expect(one).toEqual(first.data.find((m) => m.id === "sandbox/chat")!);
  });

  test("one model by id, raw (ids contain slashes) or percent-encoded as the OpenAI SDKs send it", async () => {
    for (const path of [
      "/v1/models/sandbox/speech",
      "/v1/models/sandbox%2Fspeech",
      "/v1/models/sandbox%2fspeech",
    ]) {
      const res = await request(path, { key: null });
      expect(res.status).toBe(200);
      expect((await json(res)).id).toBe("sandbox/speech");
    }
    const res = await request("/v1/models/acme%2Fllm", { key: null });
    expect((await json(res)).owned_by).toBe("acme");
  });

  test.each(["/v1/models/acme/nope", "/v1/models/acme%2Fnope", "/v1/models/sandbox", "/v1/models/%E0%A4%A"])(
    "%s: an unknown model id is 404 not_found with the contract's body",
    async (path) => {
      const res = await request(path, { key: null });
      expect(res.status).toBe(404);
      const body = await json<{ error: { code: string; type: string; message: string; param: string } }>(res);
      expect(body.error).toMatchObject({
        code: "not_found",
        type: "invalid_request_error",
        param: "model_id",
      });
      expect(body.error.message).toContain("is not in the catalog");
    },
  );

  test("the catalog is live: swapping it changes the next response", async () => {
    const { request: req, ctx } = await makeTestApp();
    const before = await json<{ data: unknown[] }>(await req("/v1/models"));
    ctx.catalog = buildCatalog([{ id: "acme/new", kind: "image", price_usd_micro: 5, max: 2 }]);
    const after = await json<{ data: { id: string }[] }>(await req("/v1/models"));
    expect(after.data.length).toBe(before.data.length + 1);
    expect(after.data.some((m) => m.id === "acme/new")).toBe(true);
  });
});
