import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("GET /admin/v1/margins: security", () => {
  test("only the admin token: no token, a wrong one or an API key is 401, before the query is read", async () => {
    const t = await makeTestApp();
    const path = "/admin/v1/margins?from=bogus";
    for (const init of [
      admin("GET", undefined, null),
      admin("GET", undefined, "gat_wrongwrongwrongwrongwrongwrongwrongwrong"),
      { method: "GET", key: null, headers: { authorization: `Bearer ${t.key}` } },
      { method: "GET" },
    ]) {
      const res = await t.request(path, init);
      expect(res.status).toBe(401);
      expect((await json<Err>(res)).error.code).toBe("unauthorized");
    }
  });
});
