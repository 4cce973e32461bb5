import { describe, expect, test } from "bun:test";
import { consoleApp } from "./helpers.ts";

describe("Margins page: security", () => {
  test("operators only: a member or an account owner gets 403 on the page and the CSV; signed out goes to sign-in", async () => {
    const c = await consoleApp();
    await c.person("owner@example.com", "owner");
    await c.person("member@example.com", "member");
    for (const email of ["owner@example.com", "member@example.com"]) {
      const b = await c.signedIn(email);
      for (const path of [
        "/console/admin/margins",
        "/console/admin/margins.csv?from=2026-11-01&to=2026-11-30",
      ]) {
        const res = await b.get(path);
        expect(res.status).toBe(403);
        expect(res.headers.get("content-disposition")).toBeNull();
        expect(await res.text()).not.toContain("revenue_usd_micro");
      }
    }
    const out = await c.browser().get("/console/admin/margins.csv?from=2026-11-01&to=2026-11-30");
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toStartWith("/console/login");
  });

  test("an API key is no console session: redirected to sign-in", async () => {
    const c = await consoleApp();
    const res = await c.handle("/console/admin/margins", { headers: { authorization: `Key ${c.key}` } });
    expect(res.status).toBe(303);
  });
});
