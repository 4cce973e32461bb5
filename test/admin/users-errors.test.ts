import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("/admin/v1 people and invites: errors", () => {
  test("every route needs the admin token, before looking at the body", async () => {
    const t = await makeTestApp();
    for (const [method, path] of [
      ["POST", "/admin/v1/users/invite"],
      ["POST", "/admin/v1/users/reset-password"],
      ["GET", "/admin/v1/people"],
      ["GET", "/admin/v1/invites"],
    ] as const) {
      expect((await t.request(path, admin(method, { bogus: 1 }, null))).status).toBe(401);
      expect(
        (await t.request(path, { method, headers: { authorization: `Bearer ${t.key}` }, key: null })).status,
      ).toBe(401);
    }
  });

  test("bad bodies are 400 with the field; an unknown account or email 404", async () => {
    const t = await makeTestApp();
    const cases: [unknown, string, number][] = [
      [{}, "validation_error", 400],
      [{ email: "not-an-email" }, "validation_error", 400],
      [{ email: "a@example.com", role: "admin", account_id: t.account.id }, "validation_error", 400],
      [{ email: "a@example.com", account_id: "acct_doesnotexist00" }, "not_found", 404],
      [{ email: "a@example.com", extra: true }, "validation_error", 400],
    ];
    for (const [body, code, status] of cases) {
      const res = await t.request("/admin/v1/users/invite", admin("POST", body));
      expect(res.status).toBe(status);
      expect((await json<Err>(res)).error.code).toBe(code);
    }
    const reset = await t.request(
      "/admin/v1/users/reset-password",
      admin("POST", { email: "nobody@example.com" }),
    );
    expect(reset.status).toBe(404);
    expect((await json<Err>(reset)).error).toMatchObject({ code: "not_found", param: "email" });
    expect((await t.request("/admin/v1/people?cursor=nope", admin("GET"))).status).toBe(400);
    expect((await t.request("/admin/v1/invites?limit=0", admin("GET"))).status).toBe(400);
    expect((await t.request("/admin/v1/invites/inv_unknown12345678", admin("DELETE"))).status).toBe(404);
  });
});
