/** Disabling and enabling through the admin API, refused: a reason is required, ids are checked. */
import { describe, expect, test } from "bun:test";
import { consoleApp } from "../console/helpers.ts";
import { json } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("errors", () => {
  test("a reason is required, ids are checked, unknown ones are 404, the admin token is required", async () => {
    const c = await consoleApp();
    const person = (await c.people.members.listPeople())[0];
    const cases: [string, unknown, number, string][] = [
      [`/admin/v1/accounts/${c.account.id}/disable`, { reason: "  " }, 400, "validation_error"],
      [`/admin/v1/accounts/${c.account.id}/disable`, {}, 400, "validation_error"],
      [`/admin/v1/accounts/${c.account.id}/disable`, { reason: "x".repeat(501) }, 400, "validation_error"],
      [`/admin/v1/accounts/${c.account.id}/disable`, { reason: "x", extra: 1 }, 400, "validation_error"],
      ["/admin/v1/accounts/acct_0000000000000000/disable", { reason: "x" }, 404, "not_found"],
      ["/admin/v1/accounts/acct_0000000000000000/enable", undefined, 404, "not_found"],
      ["/admin/v1/accounts/nope/disable", { reason: "x" }, 400, "validation_error"],
      ["/admin/v1/people/person_0000000000000000/disable", { reason: "x" }, 404, "not_found"],
      ["/admin/v1/people/nope/enable", undefined, 400, "validation_error"],
    ];
    if (person)
      cases.push([`/admin/v1/people/${person.id}/disable`, { reason: "" }, 400, "validation_error"]);
    for (const [path, body, status, code] of cases) {
      const res = await c.request(path, admin("POST", body));
      expect([path, res.status]).toEqual([path, status]);
      expect((await json<Err>(res)).error.code).toBe(code);
    }
    const res = await c.request(
      `/admin/v1/accounts/${c.account.id}/disable`,
      admin("POST", { reason: "x" }, null),
    );
    expect(res.status).toBe(401);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.disabled_at).toBeNull();
  });
});
