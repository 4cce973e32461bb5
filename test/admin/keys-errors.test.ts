import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("operator key management: error paths", () => {
  test.each([
    ["GET", "/admin/v1/accounts/acct_0000000000000000", 404, "not_found"],
    ["GET", "/admin/v1/accounts/acct_0000000000000000/keys", 404, "not_found"],
    ["DELETE", "/admin/v1/keys/key_0000000000000000", 404, "not_found"],
    ["GET", "/admin/v1/accounts/nope/keys", 400, "validation_error"],
    ["DELETE", "/admin/v1/keys/nope", 400, "validation_error"],
    ["DELETE", "/admin/v1/keys/key_..%2F..%2Fx", 400, "validation_error"],
    ["POST", "/admin/v1/keys/key_0000000000000000", 405, "method_not_allowed"],
  ])("%s %s is %d %s with the contract's body", async (method, path, status, code) => {
    const t = await makeTestApp();
    const res = await t.request(path, admin(method));
    expect(res.status).toBe(status);
    const body = await json<Err>(res);
    expect(body.error.code).toBe(code);
    expect(typeof body.error.message).toBe("string");
    expect((await t.ctx.accounts.findKey(t.keyId))!.revoked_at).toBeNull();
  });

  // One vocabulary: the API's names are monthly_limit_micro and can_manage; the CLI's
  // --monthly-limit (a decimal) and --manage are refused by name, pointing at the right field.
  const misnamed: [string, Record<string, unknown>, string, RegExp][] = [
    [
      "monthly_limit",
      { monthly_limit: "10" },
      "monthly_limit",
      /"monthly_limit_micro".*10\.00 is "10000000"/,
    ],
    ["monthlyLimit", { monthlyLimit: "10" }, "monthlyLimit", /"monthly_limit_micro"/],
    ["manage", { manage: true }, "manage", /"can_manage"/],
  ];
  test.each(misnamed)("%s names the right field on every key route", async (_l, body, param, pattern) => {
    const t = await makeTestApp();
    const routes: [string, string, Record<string, unknown>][] = [
      [`/admin/v1/accounts/${t.account.id}/keys`, "POST", admin("POST", body)],
      [
        "/v1/keys",
        "POST",
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      ],
      [
        `/v1/keys/${t.keyId}`,
        "PATCH",
        { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      ],
    ];
    for (const [path, , init] of routes) {
      const res = await t.request(path, init);
      expect(res.status).toBe(400);
      const e = (await json<Err>(res)).error;
      expect(e).toMatchObject({ code: "validation_error", type: "invalid_request_error", param });
      expect(e.message).toMatch(pattern);
    }
    expect((await t.ctx.accounts.listKeys(t.account.id)).length).toBe(1);
  });

  test("the right field works on the same routes", async () => {
    const t = await makeTestApp();
    const res = await t.request(
      `/admin/v1/accounts/${t.account.id}/keys`,
      admin("POST", { monthly_limit_micro: "10000000", can_manage: true }),
    );
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ monthly_limit_micro: "10000000", can_manage: true });
  });
});
