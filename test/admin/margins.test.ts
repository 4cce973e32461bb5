import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { seedMarginJob } from "../ledger/margin-seed.ts";
import { admin } from "./helpers.ts";

type Figures = {
  jobs: number;
  revenue_usd_micro: string;
  cost_usd_micro: string;
  margin_usd_micro: string;
  cost_unknown_jobs: number;
  cost_unknown_revenue_usd_micro: string;
};
type Report = {
  from: string;
  to: string;
  by: string;
  data: (Figures & { group: string; name: string | null })[];
  totals: Figures;
};

const NOV_10 = Date.UTC(2026, 10, 10, 12);

/** Four jobs in November (two accounts, one in RUB) and one outside it. */
async function seeded() {
  const t = await makeTestApp();
  await t.ctx.fx.set("RUB", 90_000_000n, "test");
  const rub = (await t.ctx.accounts.createAccount("Rouble shop", "RUB")).account;
  await t.ctx.ledger.topUp(t.account.id, 100_000_000n, "test");
  await t.ctx.ledger.topUp(rub.id, 100_000_000_000n, "test");
  const base = { status: "COMPLETED" as const, endedAt: NOV_10, quoteUsdMicro: 30_000n };
  // acme/flux on fal: charged 30000, cost 25000 -> margin 5000.
  await seedMarginJob(t.ctx, {
    ...base,
    accountId: t.account.id,
    modelId: "acme/flux",
    provider: "fal",
    costUsdMicro: 25_000n,
  });
  // acme/flux on replicate, a RUB account: charged 30000 USD (at the hold's rate), cost 27000.
  await seedMarginJob(t.ctx, {
    ...base,
    accountId: rub.id,
    modelId: "acme/flux",
    provider: "replicate",
    costUsdMicro: 27_000n,
  });
  // acme/chat on own, cost unknown: revenue 12000 counted, left out of the margin.
  await seedMarginJob(t.ctx, {
    ...base,
    accountId: t.account.id,
    modelId: "acme/chat",
    provider: "own",
    quoteUsdMicro: 12_000n,
    costUsdMicro: null,
  });
  // A failed job the upstream billed (revenue 0, cost 4000), and one without a cost (not counted).
  for (const costUsdMicro of [4_000n, null])
    await seedMarginJob(t.ctx, {
      ...base,
      status: "FAILED",
      accountId: t.account.id,
      modelId: "acme/flux",
      provider: "fal",
      costUsdMicro,
    });
  // A job in December: not counted in November.
  await seedMarginJob(t.ctx, {
    ...base,
    endedAt: Date.UTC(2026, 11, 1),
    accountId: t.account.id,
    modelId: "acme/flux",
    provider: "fal",
    costUsdMicro: 1n,
  });
  return { t, rub };
}

async function report(t: Awaited<ReturnType<typeof makeTestApp>>, query: string): Promise<Report> {
  const res = await t.request(`/admin/v1/margins?${query}`, admin("GET"));
  expect(res.status).toBe(200);
  return await json<Report>(res);
}

describe("GET /admin/v1/margins", () => {
  test("by model: revenue, known cost, margin of the known-cost jobs, unknown-cost jobs; totals", async () => {
    const { t } = await seeded();
    const r = await report(t, "from=2026-11-01&to=2026-11-30");
    expect(r).toMatchObject({ from: "2026-11-01", to: "2026-11-30", by: "model" });
    expect(r.data).toEqual([
      {
        group: "acme/chat",
        name: null,
        jobs: 1,
        revenue_usd_micro: "12000",
        cost_usd_micro: "0",
        margin_usd_micro: "0",
        cost_unknown_jobs: 1,
        cost_unknown_revenue_usd_micro: "12000",
      },
      {
        group: "acme/flux",
        name: null,
        jobs: 3,
        revenue_usd_micro: "60000",
        cost_usd_micro: "56000",
        margin_usd_micro: "4000",
        cost_unknown_jobs: 0,
        cost_unknown_revenue_usd_micro: "0",
      },
    ]);
    expect(r.totals).toEqual({
      jobs: 4,
      revenue_usd_micro: "72000",
      cost_usd_micro: "56000",
      margin_usd_micro: "4000",
      cost_unknown_jobs: 1,
      cost_unknown_revenue_usd_micro: "12000",
    });
  });

  test("by provider and by account (with the account's name)", async () => {
    const { t, rub } = await seeded();
    const p = await report(t, "from=2026-11-10&to=2026-11-10&by=provider");
    expect(
      p.data.map((r) => [r.group, r.jobs, r.revenue_usd_micro, r.cost_usd_micro, r.margin_usd_micro]),
    ).toEqual([
      ["fal", 2, "30000", "29000", "1000"],
      ["own", 1, "12000", "0", "0"],
      ["replicate", 1, "30000", "27000", "3000"],
    ]);
    const a = await report(t, "from=2026-11-10&to=2026-11-10&by=account");
    const byId = Object.fromEntries(a.data.map((r) => [r.group, r]));
    expect(byId[rub.id]).toMatchObject({
      name: "Rouble shop",
      jobs: 1,
      revenue_usd_micro: "30000",
      margin_usd_micro: "3000",
    });
    expect(byId[t.account.id]).toMatchObject({ name: "default", jobs: 3, revenue_usd_micro: "42000" });
    expect(a.totals).toEqual(p.totals);
  });

  test("both days are included, in UTC; an empty range has zero totals", async () => {
    const { t } = await seeded();
    expect((await report(t, "from=2026-11-10&to=2026-11-10")).totals.jobs).toBe(4);
    expect((await report(t, "from=2026-12-01&to=2026-12-01")).totals.jobs).toBe(1);
    expect((await report(t, "from=2026-11-11&to=2026-11-30")).totals).toEqual({
      jobs: 0,
      revenue_usd_micro: "0",
      cost_usd_micro: "0",
      margin_usd_micro: "0",
      cost_unknown_jobs: 0,
      cost_unknown_revenue_usd_micro: "0",
    });
  });
});
