/** Bad key controls are 400 validation_error naming the field, never a 500, and change nothing. */
import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Err = { error: { code: string; message: string; param?: string } };
const send = (method: string, body: unknown) => ({
  method,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

const BAD: [string, Record<string, unknown>, string][] = [
  ["a date without a time", { expires_at: "2099-01-31" }, "expires_at"],
  ["a time without a zone", { expires_at: "2099-01-31T10:00:00" }, "expires_at"],
  ["not a time", { expires_at: "tomorrow" }, "expires_at"],
  ["an impossible date", { expires_at: "2099-13-45T10:00:00Z" }, "expires_at"],
  ["a time in the past", { expires_at: "2001-01-01T00:00:00Z" }, "expires_at"],
  ["a number", { expires_at: 4102444800 }, "expires_at"],
  ["models not a list", { allowed_models: "sandbox/image" }, "allowed_models"],
  ["101 models", { allowed_models: Array.from({ length: 101 }, (_, i) => `m/${i}`) }, "allowed_models"],
  ["a model of 201 characters", { allowed_models: [`a/${"x".repeat(199)}`] }, "allowed_models"],
  ["an empty model", { allowed_models: [""] }, "allowed_models"],
  ["a * inside a model", { allowed_models: ["sandbox/*/x"] }, "allowed_models"],
  ["a space in a model", { allowed_models: ["sandbox/ image"] }, "allowed_models"],
  ["not a CIDR", { allowed_cidrs: ["example.com"] }, "allowed_cidrs"],
  ["a prefix too long", { allowed_cidrs: ["10.0.0.0/33"] }, "allowed_cidrs"],
  ["host bits set", { allowed_cidrs: ["10.0.0.1/8"] }, "allowed_cidrs"],
  ["a bracketed IPv6", { allowed_cidrs: ["[::1]/128"] }, "allowed_cidrs"],
  ["101 CIDRs", { allowed_cidrs: Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`) }, "allowed_cidrs"],
];

describe("POST /v1/keys and PATCH /v1/keys/{id} refuse bad controls", () => {
  for (const [what, body, param] of BAD) {
    test(`${what}: 400 on create and on update, nothing changed`, async () => {
      const t = await makeTestApp();
      const before = (await json<{ data: unknown[] }>(await t.request("/v1/keys"))).data;
      const created = await t.request("/v1/keys", send("POST", { name: "x", ...body }));
      expect(created.status).toBe(400);
      const err = await json<Err>(created);
      expect(err.error.code).toBe("validation_error");
      expect(JSON.stringify(err)).toContain(param);
      const updated = await t.request(`/v1/keys/${t.keyId}`, send("PATCH", body));
      expect(updated.status).toBe(400);
      expect((await json<Err>(updated)).error.code).toBe("validation_error");
      expect((await json<{ data: unknown[] }>(await t.request("/v1/keys"))).data).toEqual(before);
    });
  }

  test("disabled is PATCH's alone (a new key starts enabled) and must be a boolean", async () => {
    const t = await makeTestApp();
    expect((await t.request("/v1/keys", send("POST", { disabled: true }))).status).toBe(400);
    expect((await t.request(`/v1/keys/${t.keyId}`, send("PATCH", { disabled: "yes" }))).status).toBe(400);
  });

  test("a revoked key's controls cannot be changed (409)", async () => {
    const t = await makeTestApp();
    const made = await json<{ id: string }>(await t.request("/v1/keys", send("POST", { name: "r" })));
    expect((await t.request(`/v1/keys/${made.id}`, { method: "DELETE" })).status).toBe(200);
    const res = await t.request(`/v1/keys/${made.id}`, send("PATCH", { disabled: false }));
    expect(res.status).toBe(409);
  });
});
