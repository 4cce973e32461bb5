// The operator's Margins page in Chromium (docs/console.md "Margins"): two sandbox jobs run through
// the API and settled, one given an upstream cost as the routes' settlement writes it; the page (this
// month by model) shows the API's figures to the micro-unit, `By` Provider regroups them, the CSV
// link downloads the same rows; the providers page too. At 1280 and 390 px: no request to another
// origin, no console error, no serious or critical axe violation, no sideways scrolling at 390 px.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { thisMonth } from "../../src/admin/margins.ts";
import { describeBrowser, inviteAndSignIn, overflowsHorizontally } from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, credit, runImage, visit } from "./browser-e2e.ts";

type Report = { data: Record<string, string | number | null>[]; totals: Record<string, string | number> };

describeBrowser("the Margins page", () => {
  const session = browserSession();

  test("the page and its CSV show the API's figures; By regroups them; the providers page", async () => {
    const { server, g } = session;
    await inviteAndSignIn(g, server, { operator: true });
    const page = g.page;
    const key = server.defaultKey!;
    const account = (await apiAccount(server, key)).account!;
    await credit(server, account.id, "5");
    const first = await runImage(server, key, 2);
    const second = await runImage(server, key, 1);
    expect([first.status, second.status]).toEqual([200, 200]);
    // The upstream cost of one job, written as the routes' settlement writes it (SQLite data dir).
    const file = join(server.dataDir, "gengate.db");
    if (existsSync(file)) {
      const db = new Database(file);
      db.run("PRAGMA busy_timeout = 5000");
      db.run("UPDATE jobs SET cost_usd_micro = 1234 WHERE id = ?", [first.requestId!]);
      db.close();
    }

    const { from, to } = thisMonth();
    const api = async (by: string) =>
      (await (
        await fetch(`${server.url}/admin/v1/margins?from=${from}&to=${to}&by=${by}`, {
          headers: { authorization: `Bearer ${server.adminToken}` },
        })
      ).json()) as Report;

    await visit(g, "/console/admin");
    await page.getByRole("link", { name: "Margins", exact: true }).click();
    await g.settle();
    await checkPage(g, "margins by model");
    const byModel = await api("model");
    expect(byModel.totals.jobs).toBe(2);
    if (existsSync(file))
      expect(byModel.totals).toMatchObject({ cost_usd_micro: "1234", cost_unknown_jobs: 1 });
    const shown = async () =>
      await page
        .locator("#margins tr.total data")
        .evaluateAll((els) => els.map((e) => e.getAttribute("value")));
    expect(await shown()).toEqual(
      [
        byModel.totals.revenue_usd_micro,
        byModel.totals.cost_usd_micro,
        byModel.totals.margin_usd_micro,
        ...(byModel.totals.cost_unknown_jobs ? [byModel.totals.cost_unknown_revenue_usd_micro] : []),
      ].map(String),
    );
    expect(await page.locator("#margins td", { hasText: "sandbox/image" }).count()).toBe(1);

    // By Provider.
    await page.locator('select[name="by"]').selectOption("provider");
    await Promise.all([
      page.waitForURL(/by=provider/),
      page.getByRole("button", { name: "Show", exact: true }).click(),
    ]);
    await g.settle();
    await checkPage(g, "margins by provider");
    expect(await page.locator("#margins td", { hasText: "sandbox" }).count()).toBe(1);

    // The CSV link: the same rows as the API.
    const href = await page.getByRole("link", { name: "Download CSV" }).getAttribute("href");
    const csv = await page.request.get(new URL(href!, g.origin).href);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).trimEnd().split("\r\n");
    const byProvider = await api("provider");
    expect(lines.at(-1)).toBe(
      [
        "total",
        "",
        byProvider.totals.jobs,
        byProvider.totals.revenue_usd_micro,
        byProvider.totals.cost_usd_micro,
        byProvider.totals.margin_usd_micro,
        byProvider.totals.cost_unknown_jobs,
        byProvider.totals.cost_unknown_revenue_usd_micro,
      ].join(","),
    );
    await visit(g, "/console/admin/providers");
  }, 180_000);

  test("at 390 px the Margins and providers pages fit without sideways scrolling and pass axe", async () => {
    const { g } = session;
    await g.page.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      "/console/admin/margins",
      "/console/admin/margins?by=account",
      "/console/admin/providers",
    ]) {
      await visit(g, path);
      expect(`${path}: ${await overflowsHorizontally(g.page)}`).toBe(`${path}: false`);
    }
  }, 120_000);
});
