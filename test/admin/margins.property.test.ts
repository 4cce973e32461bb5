// The margins report against the jobs it sums, over random histories (seeded: FC_SEED replays a
// run): random accounts in USD and RUB (at rates that change between jobs), models, providers,
// completed jobs charged in full or in part, failed and cancelled ones, known and unknown costs, and
// end times on both sides of the range's edges. Each figure equals, to the micro-unit, the sum over
// the jobs the rules count (docs/providers.md "Margins"), computed here from the seeded jobs alone.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type MarginFigures, marginReport } from "../../src/admin/margins.ts";
import type { MarginGroup } from "../../src/ledger/margin-store.ts";
import { testQueueServices } from "../helpers/services.ts";
import { type MarginJob, seedMarginJob } from "../ledger/margin-seed.ts";

const SEED = Number(process.env.FC_SEED ?? 20261127);
const RUNS = Number(process.env.FC_RUNS ?? 20);
const DAY = 86_400_000;
const MODELS = ["m/a", "m/b", "m/c"];
const PROVIDERS = ["fal", "replicate", "own"];

const job = fc.record({
  account: fc.nat(3),
  model: fc.nat(MODELS.length - 1),
  provider: fc.nat(PROVIDERS.length - 1),
  status: fc.constantFrom("COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED"),
  // Around the range [day 1, day 2]: days 0..3, often exactly at an edge.
  at: fc.oneof(fc.integer({ min: 0, max: 4 * DAY - 1 }), fc.constantFrom(DAY - 1, DAY, 3 * DAY - 1, 3 * DAY)),
  quote: fc.integer({ min: 0, max: 2_000_000 }),
  chargePercent: fc.constantFrom(0, 37, 100, 150),
  cost: fc.option(fc.integer({ min: 0, max: 2_500_000 }), { nil: null }),
  rate: fc.integer({ min: 50_000_000, max: 150_000_000 }),
});

const zero = (): MarginFigures => ({
  jobs: 0,
  revenue_usd_micro: 0n,
  cost_usd_micro: 0n,
  margin_usd_micro: 0n,
  cost_unknown_jobs: 0,
  cost_unknown_revenue_usd_micro: 0n,
});

function expected(jobs: (MarginJob & { charged: bigint })[], key: (j: MarginJob) => string) {
  const out = new Map<string, MarginFigures>();
  const add = (k: string, j: MarginJob & { charged: bigint }) => {
    const f = out.get(k) ?? zero();
    f.jobs++;
    f.revenue_usd_micro += j.charged;
    if (j.costUsdMicro === null) {
      f.cost_unknown_jobs++;
      f.cost_unknown_revenue_usd_micro += j.charged;
    } else {
      f.cost_usd_micro += j.costUsdMicro;
      f.margin_usd_micro += j.charged - j.costUsdMicro;
    }
    out.set(k, f);
  };
  for (const j of jobs) {
    add(key(j), j);
    add("\0total", j);
  }
  return out;
}

describe("margins report: property", () => {
  test("every figure is the sum over the counted jobs, by model, provider and account", async () => {
    const { ctx, account } = await testQueueServices();
    const accounts = [account.id];
    for (const [i, currency] of (["USD", "RUB", "RUB"] as const).entries()) {
      await ctx.fx.set("RUB", 90_000_000n, "test");
      accounts.push((await ctx.accounts.createAccount(`acct ${i}`, currency)).account.id);
    }
    for (const id of accounts) await ctx.ledger.topUp(id, 10n ** 15n, "test");
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(job, { maxLength: 25 }), async (drawn) => {
        // Each run has its own days, so runs never see each other's jobs.
        const base = Date.UTC(2030, 0, 1) + run++ * 10 * DAY;
        const counted: (MarginJob & { charged: bigint })[] = [];
        for (const d of drawn) {
          await ctx.fx.set("RUB", BigInt(d.rate), "test");
          const quote = BigInt(d.quote);
          const charge = (quote * BigInt(d.chargePercent)) / 100n;
          const j: MarginJob = {
            accountId: accounts[d.account]!,
            modelId: MODELS[d.model]!,
            provider: PROVIDERS[d.provider]!,
            status: d.status as MarginJob["status"],
            endedAt: base + d.at,
            quoteUsdMicro: quote,
            chargeUsdMicro: charge,
            costUsdMicro: d.cost === null ? null : BigInt(d.cost),
          };
          await seedMarginJob(ctx, j);
          const inRange = d.at >= DAY && d.at < 3 * DAY;
          const settled = j.status === "COMPLETED";
          // The rules: settled jobs, and released ones with a recorded cost (revenue 0).
          if (inRange && (settled || j.costUsdMicro !== null))
            counted.push({ ...j, charged: settled ? (charge < quote ? charge : quote) : 0n });
        }
        const from = new Date(base + DAY).toISOString().slice(0, 10);
        const to = new Date(base + 2 * DAY).toISOString().slice(0, 10);
        const keys: Record<MarginGroup, (j: MarginJob) => string> = {
          model: (j) => j.modelId,
          provider: (j) => j.provider,
          account: (j) => j.accountId,
        };
        for (const by of ["model", "provider", "account"] as const) {
          const report = await marginReport(ctx, { from, to, by });
          const want = expected(counted, keys[by]);
          const { "\0total": total, ...rows } = Object.fromEntries(want);
          expect(Object.fromEntries(report.data.map(({ group, name: _, ...f }) => [group, f]))).toEqual(rows);
          expect(report.totals).toEqual(total ?? zero());
          // Ordered by the group.
          expect(report.data.map((r) => r.group)).toEqual(report.data.map((r) => r.group).sort());
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);
});
