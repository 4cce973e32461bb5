import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Err = { error: { code: string; param?: string; message: string } };
const post = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
const patch = (body: unknown) => ({ ...post(body), method: "PATCH" });

describe("GET /v1/account, /account/ledger, /account/spend", () => {
  test("balance, held, available and this month's spend", async () => {
    const t = await makeTestApp();
    await t.ctx.ledger.topUp(t.account.id, 5_000_000n, "welcome");
    const hold = await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: t.keyId,
      modelId: "sandbox/image",
      requestId: "r1",
      source: "API",
      quotedUsdMicro: 30_000n,
    });
    await t.ctx.ledger.settle(hold.id, 20_000n);
    await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: t.keyId,
      modelId: "sandbox/video",
      requestId: "r2",
      source: "API",
      quotedUsdMicro: 100_000n,
    });
    const a = await json(await t.request("/v1/account"));
    expect(a).toMatchObject({
      object: "account",
      currency: "USD",
      balance_micro: "4980000",
      held_micro: "100000",
      available_micro: "4880000",
      month_spent_micro: "20000",
    });
    expect(a.month).toMatch(/^\d{4}-\d{2}$/);
  });

  test("the wallet pages newest first with labels and never shows another account", async () => {
    const t = await makeTestApp();
    for (let i = 1; i <= 5; i++) await t.ctx.ledger.topUp(t.account.id, BigInt(i), `t${i}`);
    const other = await t.ctx.accounts.createAccount("other", "USD");
    await t.ctx.ledger.topUp(other.account.id, 999n, "other's");
    const p1 = await json<{ data: { reason: string; label: string }[]; next_cursor: string }>(
      await t.request("/v1/account/ledger?limit=2"),
    );
    expect(p1.data.map((e) => e.reason)).toEqual(["t5", "t4"]);
    expect(p1.data[0]!.label).toBe("ADMIN");
    const p2 = await json<{ data: { reason: string }[]; next_cursor: string | null }>(
      await t.request(`/v1/account/ledger?limit=2&cursor=${p1.next_cursor}`),
    );
    expect(p2.data.map((e) => e.reason)).toEqual(["t3", "t2"]);
    const p3 = await json<{ data: { reason: string }[]; next_cursor: string | null }>(
      await t.request(`/v1/account/ledger?limit=2&cursor=${p2.next_cursor}`),
    );
    expect(p3.data.map((e) => e.reason)).toEqual(["t1"]);
    expect(p3.next_cursor).toBeNull();
  });

  test("spend per key and per model for a month; other months are separate", async () => {
    let clock = Date.UTC(2026, 9, 31, 23, 0, 0) / 1000;
    const t = await makeTestApp({ now: () => clock });
    await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
    const second = await t.ctx.accounts.createKey(t.account.id, { name: "ci" });
    const charge = async (keyId: string, model: string, usd: bigint) => {
      const h = await t.ctx.ledger.reserve({
        accountId: t.account.id,
        keyId,
        modelId: model,
        requestId: null,
        source: "API",
        quotedUsdMicro: usd,
      });
      await t.ctx.ledger.settle(h.id, usd);
    };
    await charge(t.keyId, "sandbox/image", 10_000n);
    clock += 3600 * 2; // November
    await charge(t.keyId, "sandbox/image", 20_000n);
    await charge(second.keyId, "sandbox/image", 30_000n);
    await charge(second.keyId, "sandbox/video", 40_000n);
    const nov = await json<{
      total_micro: string;
      by_key: { key_id: string; spent_micro: string }[];
      by_model: { model_id: string; spent_micro: string; calls: number }[];
    }>(await t.request("/v1/account/spend?month=2026-11"));
    expect(nov.total_micro).toBe("90000");
    expect(nov.by_key.find((k) => k.key_id === second.keyId)!.spent_micro).toBe("70000");
    expect(nov.by_model.find((m) => m.model_id === "sandbox/image")).toMatchObject({
      spent_micro: "50000",
      calls: 2,
    });
    const oct = await json<{ total_micro: string }>(await t.request("/v1/account/spend?month=2026-10"));
    expect(oct.total_micro).toBe("10000");
    const current = await json<{ month: string }>(await t.request("/v1/account/spend"));
    expect(current.month).toBe("2026-11");
  });

  test.each(["2026-13", "26-01", "2026-1", "abc", "2026-00"])(
    "month %p is 400 validation_error",
    async (month) => {
      const t = await makeTestApp();
      const res = await t.request(`/v1/account/spend?month=${month}`);
      expect(res.status).toBe(400);
      expect((await json<Err>(res)).error.param).toBe("month");
    },
  );

  test.each(["0", "101", "-1", "x"])("ledger limit %p is 400", async (limit) => {
    const t = await makeTestApp();
    expect((await t.request(`/v1/account/ledger?limit=${limit}`)).status).toBe(400);
  });
});

describe("keys API", () => {
  test("the Default key creates, lists, updates and revokes keys", async () => {
    const t = await makeTestApp();
    const created = await t.request(
      "/v1/keys",
      post({ name: "ci", monthly_limit_micro: "5000000", max_in_flight: 3 }),
    );
    expect(created.status).toBe(201);
    const k = await json<{
      id: string;
      key: string;
      can_manage: boolean;
      monthly_limit_micro: string;
      prefix: string;
    }>(created);
    expect(k.key).toMatch(/^gk_/);
    expect(k.can_manage).toBe(false);
    expect(k.monthly_limit_micro).toBe("5000000");
    expect(k.key.startsWith(k.prefix)).toBe(true);

    const list = await json<{ data: { id: string; key?: string }[] }>(await t.request("/v1/keys"));
    expect(list.data.map((x) => x.id)).toContain(k.id);
    expect(JSON.stringify(list)).not.toContain(k.key);

    const updated = await json<{ name: string; monthly_limit_micro: string | null }>(
      await t.request(`/v1/keys/${k.id}`, patch({ name: "ci-2", monthly_limit_micro: null })),
    );
    expect(updated).toMatchObject({ name: "ci-2", monthly_limit_micro: null });

    const revoked = await t.request(`/v1/keys/${k.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect((await json<{ revoked_at: string | null }>(revoked)).revoked_at).not.toBeNull();
    expect((await t.request("/v1/account", { key: k.key })).status).toBe(401);
  });

  test("a key without the manage right cannot manage keys (403) but can use the account", async () => {
    const t = await makeTestApp();
    const { key } = await t.ctx.accounts.createKey(t.account.id, { name: "plain" });
    expect((await t.request("/v1/account", { key })).status).toBe(200);
    for (const [path, init] of [
      ["/v1/keys", {}],
      ["/v1/keys", post({ name: "x" })],
      [`/v1/keys/${t.keyId}`, { method: "DELETE" }],
    ] as const) {
      const res = await t.request(path, { ...init, key });
      expect(res.status).toBe(403);
      expect((await json<Err>(res)).error.code).toBe("forbidden");
    }
    expect((await t.request(`/v1/keys/${t.keyId}`, { method: "DELETE" })).status).toBe(409);
  });

  test("a key created with can_manage may manage keys", async () => {
    const t = await makeTestApp();
    const k = await json<{ key: string }>(
      await t.request("/v1/keys", post({ name: "admin2", can_manage: true })),
    );
    expect((await t.request("/v1/keys", { key: k.key })).status).toBe(200);
    // Now the Default key is no longer the last manage key.
    expect((await t.request(`/v1/keys/${t.keyId}`, { method: "DELETE", key: k.key })).status).toBe(200);
  });

  test("revoking the last manage key is refused with a clear error", async () => {
    const t = await makeTestApp();
    const res = await t.request(`/v1/keys/${t.keyId}`, { method: "DELETE" });
    expect(res.status).toBe(409);
    expect((await json<Err>(res)).error.message).toContain("last key with the manage right");
    expect((await t.request("/v1/account")).status).toBe(200);
  });

  test("another account's key id is 404, and a malformed id is 400", async () => {
    const t = await makeTestApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    expect((await t.request(`/v1/keys/${other.keyId}`, patch({ name: "mine" }))).status).toBe(404);
    expect((await t.request(`/v1/keys/${other.keyId}`, { method: "DELETE" })).status).toBe(404);
    expect((await t.request("/v1/keys/..%2F..%2Fetc", { method: "DELETE" })).status).toBe(400);
    expect((await t.ctx.accounts.getKey(other.account.id, other.keyId)).name).toBe("Default");
  });

  test.each([
    ["negative", "-1"],
    ["fractional", "1.5"],
    ["beyond int64", "99999999999999999999"],
    ["non-numeric", "ten"],
    ["a number, not a string", 5],
  ])("monthly_limit_micro %s is 400 and changes nothing", async (_label, value) => {
    const t = await makeTestApp();
    const k = await t.ctx.accounts.createKey(t.account.id, { name: "x", monthlyLimitMicro: 7n });
    const res = await t.request(`/v1/keys/${k.keyId}`, patch({ monthly_limit_micro: value }));
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.code).toBe("validation_error");
    expect((await t.ctx.accounts.getKey(t.account.id, k.keyId)).monthly_limit_micro).toBe(7n);
  });

  test("a 19-digit limit above the supported maximum is refused", async () => {
    const t = await makeTestApp();
    const res = await t.request("/v1/keys", post({ monthly_limit_micro: "9223372036854775807" }));
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.param).toBe("monthly_limit_micro");
  });

  test("unknown fields are refused", async () => {
    const t = await makeTestApp();
    expect((await t.request("/v1/keys", post({ name: "x", superuser: true }))).status).toBe(400);
  });
});
