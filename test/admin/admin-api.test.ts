import { describe, expect, test } from "bun:test";
import { countRows } from "../helpers/backend.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("/admin/v1", () => {
  test("needs the admin token; an API key is not enough", async () => {
    const t = await makeTestApp();
    expect((await t.request("/admin/v1/accounts", admin("GET", undefined, null))).status).toBe(401);
    expect((await t.request("/admin/v1/accounts", admin("GET", undefined, "gat_wrong"))).status).toBe(401);
    expect(
      (await t.request("/admin/v1/accounts", { headers: { authorization: `Bearer ${t.key}` }, key: null }))
        .status,
    ).toBe(401);
    // Authentication comes before body validation.
    expect((await t.request("/admin/v1/accounts", admin("POST", { bogus: 1 }, null))).status).toBe(401);
  });

  test("create an account with credit, top it up, adjust it, list and read it", async () => {
    const t = await makeTestApp();
    const created = await t.request(
      "/admin/v1/accounts",
      admin("POST", { name: "acme", currency: "RUB", credit: "100.50" }),
    );
    expect(created.status).toBe(201);
    const c = await json<{ account: { id: string; balance_micro: string; currency: string }; key: string }>(
      created,
    );
    expect(c.account).toMatchObject({ balance_micro: "100500000", currency: "RUB" });
    expect((await t.request("/v1/account", { key: c.key })).status).toBe(200);

    const credited = await json(
      await t.request(
        `/admin/v1/accounts/${c.account.id}/credit`,
        admin("POST", { amount: "0.000001", reason: "rounding test" }),
      ),
    );
    expect(credited.balance_micro).toBe("100500001");
    const adjusted = await json(
      await t.request(
        `/admin/v1/accounts/${c.account.id}/adjust`,
        admin("POST", { amount: "-0.500001", reason: "fee refund" }),
      ),
    );
    expect(adjusted.balance_micro).toBe("100000000");

    const one = await json<{ keys: { name: string }[] }>(
      await t.request(`/admin/v1/accounts/${c.account.id}`, admin("GET")),
    );
    expect(one.keys.map((k) => k.name)).toEqual(["Default"]);
    const list = await json<{ data: { name: string }[] }>(
      await t.request("/admin/v1/accounts?limit=1", admin("GET")),
    );
    expect(list.data.length).toBe(1);
    const ledger = await json<{ data: { kind: string; label: string; reason: string }[] }>(
      await t.request(`/admin/v1/accounts/${c.account.id}/ledger`, admin("GET")),
    );
    expect(ledger.data.map((e) => `${e.kind}:${e.label}:${e.reason}`)).toEqual([
      "adjustment:ADMIN:fee refund",
      "topup:ADMIN:rounding test",
      "topup:ADMIN:initial credit",
    ]);
  });

  test("keys for an account and FX rates", async () => {
    const t = await makeTestApp();
    const k = await json<{ key: string; monthly_limit_micro: string }>(
      await t.request(
        `/admin/v1/accounts/${t.account.id}/keys`,
        admin("POST", { name: "team", monthly_limit_micro: "2000000" }),
      ),
    );
    expect(k.monthly_limit_micro).toBe("2000000");
    expect((await t.request("/v1/account", { key: k.key })).status).toBe(200);
    const fx = await json(await t.request("/admin/v1/fx/RUB", admin("PUT", { rate: "91.25" })));
    expect(fx).toMatchObject({ currency: "RUB", rate_micro: "91250000", source: "admin" });
    const all = await json<{ data: unknown[] }>(await t.request("/admin/v1/fx", admin("GET")));
    expect(all.data.length).toBe(1);
  });

  const bad: [string, string, unknown, string, number?][] = [
    ["negative credit", "credit", { amount: "-1", reason: "x" }, "validation_error"],
    ["zero credit", "credit", { amount: "0", reason: "x" }, "validation_error"],
    ["fractional micro", "credit", { amount: "1.0000001", reason: "x" }, "validation_error"],
    ["huge credit", "credit", { amount: "99999999999999999999", reason: "x" }, "validation_error"],
    ["non-numeric credit", "credit", { amount: "ten", reason: "x" }, "validation_error"],
    ["number instead of string", "credit", { amount: 10, reason: "x" }, "validation_error"],
    ["credit without reason", "credit", { amount: "1" }, "validation_error"],
    ["credit with a blank reason", "credit", { amount: "1", reason: "   " }, "validation_error"],
    ["adjust without reason", "adjust", { amount: "-1" }, "validation_error"],
    ["adjust below zero", "adjust", { amount: "-1", reason: "x" }, "conflict", 409],
  ];
  test.each(bad)("%s changes no money", async (_label, action, body, code, status = 400) => {
    const t = await makeTestApp();
    const res = await t.request(`/admin/v1/accounts/${t.account.id}/${action}`, admin("POST", body));
    expect(res.status).toBe(status);
    expect((await json<Err>(res)).error.code).toBe(code);
    expect((await t.ctx.accounts.getAccount(t.account.id))!.balance_micro).toBe(0n);
    expect(await countRows(t.ctx.sql, "ledger_entries")).toBe(0);
  });

  test("unknown account ids are 404; malformed ones 400", async () => {
    const t = await makeTestApp();
    expect((await t.request("/admin/v1/accounts/acct_0000000000000000", admin("GET"))).status).toBe(404);
    expect(
      (
        await t.request(
          "/admin/v1/accounts/acct_0000000000000000/credit",
          admin("POST", { amount: "1", reason: "r" }),
        )
      ).status,
    ).toBe(404);
    expect(
      (await t.request("/admin/v1/accounts/..%2Fx/credit", admin("POST", { amount: "1", reason: "r" })))
        .status,
    ).toBe(400);
  });

  test.each(["0", "-5", "abc", "1e3", "92.1234567", "99999999"])("rate %p is refused", async (rate) => {
    const t = await makeTestApp();
    const res = await t.request("/admin/v1/fx/RUB", admin("PUT", { rate }));
    expect(res.status).toBe(400);
    expect(await t.ctx.fx.get("RUB")).toBeNull();
  });

  test("a duplicate account name is 409", async () => {
    const t = await makeTestApp();
    expect((await t.request("/admin/v1/accounts", admin("POST", { name: "default" }))).status).toBe(409);
  });
});
