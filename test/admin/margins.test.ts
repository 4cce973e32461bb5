import { describe, expect, test } from "bun:test";
import { json, makeTestApp, testWorkerPool } from "../helpers/context.ts";
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

  test("real client calls count: a /v1/run image job and a chat completion, at what they were charged", async () => {
    const t = await makeTestApp();
    const pool = testWorkerPool(t.ctx);
    await t.ctx.ledger.topUp(t.account.id, 10_000_000n, "test");
    const post = (path: string, body: unknown) =>
      t.request(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post("/v1/run/sandbox/image", { prompt: "x", num_images: 2 })).status).toBe(200);
    const chat = await post("/v1/chat/completions", {
      model: "sandbox/chat",
      messages: [{ role: "user", content: "hello" }],
    });
    expect(chat.status).toBe(200);
    await chat.text();
    const day = new Date().toISOString().slice(0, 10);
    const r = await report(t, `from=${day}&to=${day}`);
    // Each job's revenue is its hold's USD charge; the account's month spend is the same money (USD).
    const holds = await t.ctx.sql.all<{ model_id: string; charged_usd_micro: bigint }>(
      "SELECT model_id, charged_usd_micro FROM holds WHERE status = 'settled' ORDER BY model_id",
    );
    expect(holds.map((h) => h.model_id)).toEqual(["sandbox/chat", "sandbox/image"]);
    expect(r.data.map((l) => [l.group, l.jobs, l.revenue_usd_micro, l.cost_unknown_jobs])).toEqual(
      holds.map((h) => [h.model_id, 1, String(h.charged_usd_micro), 1]),
    );
    const spent = (await json<{ month_spent_micro: string }>(await t.request("/v1/account")))
      .month_spent_micro;
    expect(r.totals.revenue_usd_micro).toBe(spent);
    expect(BigInt(spent)).toBeGreaterThan(0n);
    await pool.stop(1000);
  });
});
