import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

describe("authentication", async () => {
  const { request, key, ctx, account } = await makeTestApp();
  const get = (authorization?: string) =>
    request("/v1/account", { key: null, headers: authorization ? { authorization } : {} });

  test("Key form is accepted", async () => {
    const res = await get(`Key ${key}`);
    expect(res.status).toBe(200);
    expect((await json(res)).id).toBe(account.id);
  });

  test("Bearer form is accepted (OpenAI SDKs)", async () => {
    expect((await get(`Bearer ${key}`)).status).toBe(200);
  });

  test("Token form is accepted (Replicate's clients)", async () => {
    expect((await get(`Token ${key}`)).status).toBe(200);
  });

  test("x-api-key is accepted (Anthropic's SDKs), alone or with the same key in Authorization", async () => {
    const alone = await request("/v1/account", { key: null, headers: { "x-api-key": key } });
    expect(alone.status).toBe(200);
    const both = await request("/v1/account", {
      key: null,
      headers: { "x-api-key": key, authorization: `Bearer ${key}` },
    });
    expect(both.status).toBe(200);
  });

  test("two different keys (Authorization and x-api-key) are 401, even when both are valid", async () => {
    const { key: other } = await ctx.accounts.createKey(account.id, { name: "second" });
    const res = await request("/v1/account", {
      key: null,
      headers: { "x-api-key": other, authorization: `Key ${key}` },
    });
    expect(res.status).toBe(401);
    expect((await json<{ error: { message: string } }>(res)).error.message).toContain(
      "Two different API keys",
    );
  });

  test("a malformed Authorization is 401 even with a good x-api-key", async () => {
    const res = await request("/v1/account", {
      key: null,
      headers: { "x-api-key": key, authorization: "Basic abc" },
    });
    expect(res.status).toBe(401);
  });

  test("scheme is case-insensitive", async () => {
    expect((await get(`key ${key}`)).status).toBe(200);
    expect((await get(`BEARER ${key}`)).status).toBe(200);
  });

  test.each([
    ["missing", undefined],
    ["empty", ""],
    ["scheme only", "Key"],
    ["wrong scheme", `Basic ${key}`],
    ["unknown key", `Key gk_${"x".repeat(40)}`],
    ["key with a changed last character", `Key ${key.slice(0, -1)}${key.endsWith("a") ? "b" : "a"}`],
    ["not a gk_ key", "Key sk-123"],
    ["admin token used as API key", "Key gat_testtesttesttesttesttesttesttesttesttest"],
    ["two tokens", `Key ${key} extra`],
  ])("%s header is 401 unauthorized", async (_label, header) => {
    const res = await get(header);
    expect(res.status).toBe(401);
    const body = await json<{ error: { code: string; type: string } }>(res);
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.type).toBe("authentication_error");
  });

  test("a revoked key is 401", async () => {
    const { key: other, keyId } = await ctx.accounts.createKey(account.id, { name: "temp" });
    expect((await get(`Key ${other}`)).status).toBe(200);
    await ctx.accounts.revokeKey(account.id, keyId);
    expect((await get(`Key ${other}`)).status).toBe(401);
  });

  test("keys are stored only as SHA-256 digests", async () => {
    const rows = await ctx.sql.all<Record<string, unknown>>("SELECT * FROM api_keys");
    const dump = JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(key.slice(12));
    for (const row of rows) expect((row.hash as Uint8Array).length).toBe(32);
  });

  test("keys are gk_ + 40 base62 characters and distinct", async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 50; i++) keys.add((await ctx.accounts.createKey(account.id)).key);
    expect(keys.size).toBe(50);
    for (const k of keys) expect(k).toMatch(/^gk_[0-9A-Za-z]{40}$/);
  });

  test("public routes need no key", async () => {
    for (const path of ["/v1/models", "/v1/llms.txt", "/v1/openapi.json", "/docs", "/healthz", "/readyz"]) {
      const res = await request(path, { key: null });
      expect(res.status).toBe(200);
    }
  });
});
