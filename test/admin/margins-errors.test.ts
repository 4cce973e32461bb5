import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

describe("GET /admin/v1/margins: errors", () => {
  test("bad ranges and groups are 400 validation_error naming the parameter", async () => {
    const t = await makeTestApp();
    const cases: [string, string][] = [
      ["to=2026-11-30", "from"],
      ["from=2026-11-01", "to"],
      ["from=2026-11-31&to=2026-12-01", "from"],
      ["from=2026-11-01&to=20261130", "to"],
      ["from=2026-11-02&to=2026-11-01", "to"],
      ["from=2025-01-01&to=2026-01-02", "to"],
      ["from=2026-11-01&to=2026-11-30&by=key", "by"],
      ["from=2026-11-01T00:00&to=2026-11-30", "from"],
    ];
    for (const [query, param] of cases) {
      const res = await t.request(`/admin/v1/margins?${query}`, admin("GET"));
      expect(res.status).toBe(400);
      expect((await json<Err>(res)).error).toMatchObject({ code: "validation_error", param });
    }
  });

  test("366 days is the longest range (a leap year), 367 is refused", async () => {
    const t = await makeTestApp();
    expect((await t.request("/admin/v1/margins?from=2028-01-01&to=2028-12-31", admin("GET"))).status).toBe(
      200,
    );
    expect((await t.request("/admin/v1/margins?from=2027-01-01&to=2028-01-02", admin("GET"))).status).toBe(
      400,
    );
  });
});
