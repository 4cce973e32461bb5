import { describe, expect, test } from "bun:test";
import { seedMarginJob } from "../ledger/margin-seed.ts";
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

describe("Margins page: what an account's name can do", () => {
  test("a name is escaped on the page and neutralised in the CSV (no markup, no spreadsheet formula)", async () => {
    const c = await consoleApp();
    await c.person("op@example.com", "owner", true);
    const b = await c.signedIn("op@example.com");
    const evil = (await c.ctx.accounts.createAccount('=HYPERLINK("http://x")<script>x</script>', "USD"))
      .account;
    await c.ctx.ledger.topUp(evil.id, 1_000_000n, null);
    await seedMarginJob(c.ctx, {
      accountId: evil.id,
      modelId: "m/x",
      provider: "p",
      status: "COMPLETED",
      endedAt: Date.UTC(2026, 10, 5),
      quoteUsdMicro: 10n,
      costUsdMicro: 1n,
    });
    const query = "from=2026-11-01&to=2026-11-30&by=account";
    const p = await b.page(`/console/admin/margins?${query}`);
    expect(p.status).toBe(200);
    expect(p.text).not.toContain("<script>x</script>");
    expect(p.text).toContain("&lt;script&gt;x&lt;/script&gt;");
    const csv = await (await b.get(`/console/admin/margins.csv?${query}`)).text();
    expect(csv).toContain(`${evil.id},"'=HYPERLINK(""http://x"")<script>x</script>",1,10,1,9,0,0`);
  });
});
