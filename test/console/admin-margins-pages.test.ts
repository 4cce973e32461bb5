import { describe, expect, test } from "bun:test";
import { type MarginFigures, thisMonth } from "../../src/admin/margins.ts";
import { marginsBody, PAGE_ROWS } from "../../src/console/admin-margins-view.ts";
import { admin } from "../admin/helpers.ts";
import { json } from "../helpers/context.ts";
import { seedMarginJob } from "../ledger/margin-seed.ts";
import { consoleApp } from "./helpers.ts";

type Report = { data: Record<string, string | number | null>[]; totals: Record<string, string | number> };

/** An operator's browser and a few jobs that ended now (this month), one in RUB, one of unknown cost. */
async function seeded() {
  const c = await consoleApp();
  await c.person("op@example.com", "owner", true);
  const b = await c.signedIn("op@example.com");
  await c.ctx.fx.set("RUB", 92_000_000n, "test");
  const rub = (await c.ctx.accounts.createAccount("Moscow Lab", "RUB")).account;
  await c.ctx.ledger.topUp(c.account.id, 100_000_000n, null);
  await c.ctx.ledger.topUp(rub.id, 100_000_000_000n, null);
  const now = Date.now();
  const base = { status: "COMPLETED" as const, endedAt: now, quoteUsdMicro: 1_234_567n };
  await seedMarginJob(c.ctx, {
    ...base,
    accountId: c.account.id,
    modelId: "acme/flux",
    provider: "fal",
    costUsdMicro: 1_000_001n,
  });
  await seedMarginJob(c.ctx, {
    ...base,
    accountId: rub.id,
    modelId: "acme/flux",
    provider: "replicate",
    costUsdMicro: 900_000n,
  });
  await seedMarginJob(c.ctx, {
    ...base,
    accountId: rub.id,
    modelId: "acme/chat",
    provider: "own",
    quoteUsdMicro: 5_000n,
    costUsdMicro: null,
  });
  return { c, b, rub };
}

/** The exact micro-units of each `<data value>` in the table's rows, row by row. */
function tableValues(text: string): string[][] {
  const table = text.slice(text.indexOf('<table class="stack-rows" id="margins">'), text.indexOf("</table>"));
  return [...table.matchAll(/<tr[ >][\s\S]*?<\/tr>/g)]
    .slice(1)
    .map((row) => [...row[0].matchAll(/<data value="(-?\d+)">/g)].map((m) => m[1]!));
}

describe("Margins page", () => {
  test("this month by model by default; the table's amounts and the totals are the API's, to the micro-unit", async () => {
    const { c, b } = await seeded();
    const p = await b.page("/console/admin/margins");
    expect(p.status).toBe(200);
    expect(p.text).toContain('<a href="/console/admin/margins" aria-current="page">Margins</a>');
    const { from, to } = thisMonth();
    expect(p.text).toContain(`name="from" value="${from}"`);
    expect(p.text).toContain(`name="to" value="${to}"`);
    const api = await json<Report>(
      await c.request(`/admin/v1/margins?from=${from}&to=${to}&by=model`, admin("GET")),
    );
    const money = (r: Record<string, unknown>) => [
      r.revenue_usd_micro,
      r.cost_usd_micro,
      r.margin_usd_micro,
      ...(Number(r.cost_unknown_jobs) ? [r.cost_unknown_revenue_usd_micro] : []),
    ];
    expect(tableValues(p.text)).toEqual([...api.data.map(money), money(api.totals)] as string[][]);
    // acme/flux: 2 x 1234567 charged, 1900001 cost: 569133 margin; shown by the display rule.
    expect(api.data.find((r) => r.group === "acme/flux")).toMatchObject({
      jobs: 2,
      margin_usd_micro: "569133",
    });
    expect(p.text).toContain('<data value="2469134">2.46 USD</data>');
    expect(p.text).toContain('1 jobs, <data value="5000">');
  });

  test("by account shows each account's name; the CSV link carries the range and the grouping", async () => {
    const { b, rub } = await seeded();
    const { from, to } = thisMonth();
    const p = await b.page(`/console/admin/margins?from=${from}&to=${to}&by=account`);
    expect(p.text).toContain(`<span class="mono">${rub.id}</span> <span class="hint">Moscow Lab</span>`);
    expect(p.text).toContain(
      `href="/console/admin/margins.csv?from=${from}&amp;to=${to}&amp;by=account" download`,
    );
    expect(p.text).toContain('<option value="account" selected>Account</option>');
  });

  test("the CSV has the API's rows and totals, exact micro-USD", async () => {
    const { c, b } = await seeded();
    const { from, to } = thisMonth();
    for (const by of ["model", "provider", "account"]) {
      const res = await b.get(`/console/admin/margins.csv?from=${from}&to=${to}&by=${by}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      expect(res.headers.get("content-disposition")).toBe(
        `attachment; filename="margins-${from}-${to}-by-${by}.csv"`,
      );
      const lines = (await res.text()).trimEnd().split("\r\n");
      expect(lines[0]).toBe(
        "group,name,jobs,revenue_usd_micro,cost_usd_micro,margin_usd_micro,cost_unknown_jobs,cost_unknown_revenue_usd_micro",
      );
      const api = await json<Report>(
        await c.request(`/admin/v1/margins?from=${from}&to=${to}&by=${by}`, admin("GET")),
      );
      const fields = (g: string, name: unknown, r: Record<string, unknown>) =>
        [
          g,
          name ?? "",
          r.jobs,
          r.revenue_usd_micro,
          r.cost_usd_micro,
          r.margin_usd_micro,
          r.cost_unknown_jobs,
          r.cost_unknown_revenue_usd_micro,
        ].join(",");
      expect(lines.slice(1)).toEqual([
        ...api.data.map((r) => fields(String(r.group), r.name === null ? "" : `${r.name}`, r)),
        fields("total", null, api.totals),
      ]);
    }
  });

  test("a range without jobs says so", async () => {
    const { b } = await seeded();
    const p = await b.page("/console/admin/margins?from=2026-01-01&to=2026-01-31");
    expect(p.text).toContain("No settled jobs ended in this range.");
    expect(p.text).not.toContain('id="margins"');
  });

  test("at most PAGE_ROWS rows on the page, saying so; the totals are over all", () => {
    const f: MarginFigures = {
      jobs: 1,
      revenue_usd_micro: 2n,
      cost_usd_micro: 1n,
      margin_usd_micro: 1n,
      cost_unknown_jobs: 0,
      cost_unknown_revenue_usd_micro: 0n,
    };
    const n = PAGE_ROWS + 1;
    const data = Array.from({ length: n }, (_, i) => ({ group: `acct_${i}`, name: `A${i}`, ...f }));
    const totals = { ...f, jobs: n, revenue_usd_micro: 2n * BigInt(n) };
    const text = String(
      marginsBody(
        { from: "2026-11-01", to: "2026-11-30", by: "account" },
        { from: "2026-11-01", to: "2026-11-30", by: "account", data, totals },
        null,
      ),
    );
    expect(text.match(/<tr[ >]/g)!.length).toBe(1 + PAGE_ROWS + 1); // header, rows, total
    expect(text).toContain(`The first ${PAGE_ROWS} of ${n} rows`);
    expect(text).toContain(`<data value="${2 * n}">`);
  });
});
