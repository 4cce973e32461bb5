import { describe, expect, test } from "bun:test";
import { json } from "../helpers/context.ts";
import { codesApp } from "./helpers.ts";

type Err = { error: { code: string; message: string; type: string; param?: string } };

async function redeemApp() {
  const t = await codesApp();
  const redeem = (body: unknown, key?: string | null, raw = false) =>
    t.request("/v1/account/redeem", {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: raw ? (body as string) : JSON.stringify(body),
    });
  return { ...t, redeem };
}

describe("POST /v1/account/redeem", () => {
  test("200 with the account and its new balance, and what was credited", async () => {
    const t = await redeemApp();
    const { codes } = await t.batch("12.5");
    const res = await t.redeem({ code: ` ${codes[0]!.toLowerCase()} ` });
    expect(res.status).toBe(200);
    const body = await json<
      Record<string, unknown> & { redeemed: { code_id: string; amount_micro: string } }
    >(res);
    expect(body).toMatchObject({
      id: t.account.id,
      object: "account",
      currency: "USD",
      balance_micro: "12500000",
      available_micro: "12500000",
      month_spent_micro: "0",
      redeemed: { amount_micro: "12500000" },
    });
    expect(body.redeemed.code_id).toMatch(/^rcode_/);
    // GET /v1/account agrees; the wallet shows a TOPUP entry naming the code.
    expect((await json(await t.request("/v1/account"))).balance_micro).toBe("12500000");
    const ledger = await json<{ data: { label: string; ref_id: string; kind: string }[] }>(
      await t.request("/v1/account/ledger"),
    );
    expect(ledger.data[0]).toMatchObject({ kind: "topup", label: "TOPUP", ref_id: body.redeemed.code_id });
  });

  test("used, unknown: 400 invalid_code; another currency: 400 currency_mismatch", async () => {
    const t = await redeemApp();
    const { codes } = await t.batch("1");
    expect((await t.redeem({ code: codes[0] })).status).toBe(200);
    for (const code of [codes[0], "AAAAA-AAAAA-AAAAA-AAAAA", "hello"]) {
      const res = await t.redeem({ code });
      expect(res.status).toBe(400);
      expect((await json<Err>(res)).error).toMatchObject({
        code: "invalid_code",
        type: "invalid_request_error",
        param: "code",
      });
    }
    const rub = (await t.batch("1", 1, { currency: "RUB" })).codes[0];
    const res = await t.redeem({ code: rub });
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.code).toBe("currency_mismatch");
  });

  test("after 5 failures in an hour: 429 rate_limited with Retry-After and RateLimit headers", async () => {
    const t = await redeemApp();
    const { codes } = await t.batch("1");
    for (let i = 0; i < 5; i++) expect((await t.redeem({ code: `bad-${i}` })).status).toBe(400);
    const res = await t.redeem({ code: codes[0] });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3600");
    expect(res.headers.get("ratelimit-policy")).toBe('"redeem";q=5;w=3600');
    expect(res.headers.get("ratelimit")).toBe('"redeem";r=0;t=3600');
    expect((await json<Err>(res)).error).toMatchObject({ code: "rate_limited", type: "rate_limit_error" });
    t.advance(3600);
    expect((await t.redeem({ code: codes[0] })).status).toBe(200);
  });

  test("odd bodies: 400 validation_error, never a 500, and nothing counted as a failed code", async () => {
    const t = await redeemApp();
    const bodies: unknown[] = [
      {},
      { code: "" },
      { code: 12345 },
      { code: null },
      { code: ["AAAAA"] },
      { code: { a: 1 } },
      { code: "A".repeat(101) },
      { code: "A".repeat(1_000_000) },
      { code: "AAAAA", extra: 1 },
      [],
      "text",
      null,
    ];
    for (const body of bodies) {
      const res = await t.redeem(body);
      const text = await res.text();
      expect(`${JSON.stringify(body).slice(0, 40)} -> ${res.status}`).toMatch(/-> (400|413)$/);
      expect(JSON.parse(text).error.code).toMatch(/^(validation_error|payload_too_large)$/);
    }
    for (const raw of ["{", "not json", '{"code": "\\ud800"}']) {
      const res = await t.redeem(raw, undefined, true);
      expect(res.status).toBeLessThan(500);
    }
    expect((await t.codes.store.failures(t.account.id, 0)).count).toBeLessThanOrEqual(1);
  });

  test("the OpenAPI document describes the route and its errors", async () => {
    const t = await redeemApp();
    const spec = await json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>(await t.request("/v1/openapi.json", { key: null }));
    const op = spec.paths["/v1/account/redeem"]?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op!.responses).sort()).toEqual(["200", "400", "401", "403", "429"]);
    expect(JSON.stringify(op)).toContain("invalid_code");
  });
});

describe("POST /v1/account/redeem: who may", () => {
  test("no key or a bad key: 401; a key without the manage right: 403, nothing credited, no failure counted", async () => {
    const t = await redeemApp();
    const { codes } = await t.batch("3");
    expect((await t.redeem({ code: codes[0] }, null)).status).toBe(401);
    expect((await t.redeem({ code: codes[0] }, "gk_notakeynotakeynotakeynotakeynotakey")).status).toBe(401);
    const plain = await t.ctx.accounts.createKey(t.account.id, { name: "worker", canManage: false });
    const res = await t.redeem({ code: codes[0] }, plain.key);
    expect(res.status).toBe(403);
    const err = (await json<Err>(res)).error;
    expect(err.code).toBe("forbidden");
    expect(err.message).toContain("redeem codes");
    expect(await t.balance(t.account.id)).toBe(0n);
    expect((await t.codes.store.failures(t.account.id, 0)).count).toBe(0);
    // A revoked manage key: 401.
    const manage = await t.ctx.accounts.createKey(t.account.id, { name: "m2", canManage: true });
    await t.ctx.accounts.revokeKey(t.account.id, manage.keyId);
    expect((await t.redeem({ code: codes[0] }, manage.key)).status).toBe(401);
    expect((await t.redeem({ code: codes[0] })).status).toBe(200);
  });

  test("a key credits only its own account", async () => {
    const t = await redeemApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const { codes } = await t.batch("4");
    const res = await t.redeem({ code: codes[0] }, other.key);
    expect(res.status).toBe(200);
    expect((await json(res)).id).toBe(other.account.id);
    expect(await t.balance(other.account.id)).toBe(4_000_000n);
    expect(await t.balance(t.account.id)).toBe(0n);
  });
});

describe("POST /v1/account/redeem: blank codes", () => {
  test("a code of only spaces is a validation_error, not a counted failure", async () => {
    const t = await redeemApp();
    for (let i = 0; i < 6; i++) {
      const res = await t.redeem({ code: " \t " });
      expect(res.status).toBe(400);
      expect((await json<Err>(res)).error).toMatchObject({ code: "validation_error", param: "code" });
    }
    expect((await t.codes.store.failures(t.account.id, 0)).count).toBe(0);
  });
});
