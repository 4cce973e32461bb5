import { describe, expect, test } from "bun:test";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { ERROR_CODES } from "../../src/lib/error-body.ts";
import { json, makeTestApp } from "../helpers/context.ts";

type Spec = {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<string, { security?: unknown[]; responses: Record<string, unknown>; operationId: string }>
  >;
  components: { securitySchemes: Record<string, Record<string, string>> };
};

describe("GET /v1/openapi.json", async () => {
  const { request, app } = await makeTestApp();

  test("is OpenAPI 3.1, API version 1, with the Authorization apiKey scheme", async () => {
    const spec = await json<Spec>(await request("/v1/openapi.json", { key: null }));
    expect(spec.openapi).toStartWith("3.1");
    expect(spec.info.version).toBe("1");
    expect(spec.components.securitySchemes.apiKey).toEqual(
      expect.objectContaining({ type: "apiKey", in: "header", name: "Authorization" }),
    );
  });

  test("documents every route of the app (except the docs UI and the console), with its method", async () => {
    const spec = await json<Spec>(await request("/v1/openapi.json", { key: null }));
    for (const route of app.routes) {
      if (route.path.startsWith("/docs") || route.path.startsWith("/test/")) continue;
      // The web console and the front door are pages, not the API (hidden from the document).
      if (route.path === "/" || route.path === "/console" || route.path.startsWith("/console/")) continue;
      const path = route.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{model_id}");
      expect(spec.paths[path]?.[route.method.toLowerCase()]).toBeDefined();
    }
  });

  test("authenticated routes declare the apiKey scheme and their 401; public ones declare none", async () => {
    const spec = await json<Spec>(await request("/v1/openapi.json", { key: null }));
    const account = spec.paths["/v1/account"]!.get!;
    expect(account.security).toEqual([{ apiKey: [] }]);
    expect(account.responses["401"]).toBeDefined();
    expect(spec.paths["/v1/models"]!.get!.security).toEqual([]);
  });

  test("integer fields are integers, not 'string or integer' (examples read numbers)", async () => {
    const spec = (await json(await request("/v1/openapi.json", { key: null }))) as unknown;
    const loose: string[] = [];
    const walk = (o: unknown, at: string): void => {
      if (!o || typeof o !== "object") return;
      const text = JSON.stringify((o as { anyOf?: unknown }).anyOf ?? null);
      if (/"format":"(integer|numeric)"/.test(text)) loose.push(at);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(spec, "");
    expect(loose).toEqual([]);
    const model = (spec as { paths: Record<string, unknown> }).paths["/v1/models/{model_id}"];
    expect(JSON.stringify(model)).toContain(
      '"max":{"description":"Largest duration (s), image count or megapixels per request.","type":"integer"}',
    );
  });

  test("operation ids are unique identifiers", async () => {
    const spec = await json<Spec>(await request("/v1/openapi.json", { key: null }));
    const ids = Object.values(spec.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
  });
});

describe("GET /v1/llms.txt", () => {
  test("lists every live model with its price and every public route", async () => {
    const { request } = await makeTestApp();
    const res = await request("/v1/llms.txt", { key: null });
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain(
      "| sandbox/video | video | 480p $0.02/s, 720p $0.04/s, 1080p $0.08/s | max 10 s, default 5 |",
    );
    expect(text).toContain(
      "| sandbox/chat | text | in $0.50 / out $1.50 per 1M tokens | context 32768 tokens |",
    );
    expect(text).toContain("| GET | /v1/account | yes |");
    expect(text).toContain("| GET | /v1/models | no |");
    expect(text).toContain("Authorization: Key <API_KEY>");
    expect(text).toContain("| 402 | insufficient_balance |");
    expect(text).toContain("120 per key per minute");
  });

  test("every error code has a meaning (none of the table's rows is empty)", async () => {
    const { request } = await makeTestApp();
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    const rows = text.split("\n").filter((l) => /^\| \d{3} \| [a-z_]+ \|/.test(l));
    expect(rows.length).toBe(Object.keys(ERROR_CODES).length);
    expect(rows.filter((l) => /\|\s*\|$/.test(l))).toEqual([]);
    expect(text).toContain("| 400 | invalid_code | the redeem code is unknown");
    expect(text).toContain("| 400 | currency_mismatch | the redeem code is for another currency");
  });

  test("follows the live catalog", async () => {
    const { request, ctx } = await makeTestApp();
    expect(await (await request("/v1/llms.txt")).text()).not.toContain("acme/new");
    ctx.catalog = buildCatalog([{ id: "acme/new", kind: "image", price_usd_micro: 123_400, max: 2 }]);
    expect(await (await request("/v1/llms.txt")).text()).toContain(
      "| acme/new | image | $0.1234/image | max 2 images, default 1 |",
    );
  });
});

describe("the OpenAI Responses door in the documents", () => {
  test("POST /v1/responses is documented in the OpenAPI document and has its llms.txt section", async () => {
    const { request } = await makeTestApp();
    const spec = await json<Spec>(await request("/v1/openapi.json", { key: null }));
    const op = spec.paths["/v1/responses"]!.post! as unknown as { summary: string; tags: string[] };
    expect(op.summary).toContain("Responses");
    expect(op.tags).toEqual(["Chat"]);
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    expect(text).toContain("## OpenAI Responses (text models)");
    expect(text).toContain("| POST | /v1/responses | yes |");
  });
});

describe("GET /docs", () => {
  test("serves the reference UI from local assets only", async () => {
    const { request } = await makeTestApp();
    const html = await (await request("/docs", { key: null })).text();
    expect(html).toContain('src="/docs/assets/scalar.js"');
    expect(html).toContain("/v1/openapi.json");
    // No address outside this server: no CDN, fonts or telemetry.
    expect(html).not.toMatch(/https?:\/\//);
    const js = await request("/docs/assets/scalar.js", { key: null });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });
});
