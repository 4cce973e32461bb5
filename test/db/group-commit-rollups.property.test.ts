// The folded rollups of group commits (src/db/rollups.ts) over random batches (seeded: FC_SEED
// replays a run): jobs of two keys and no key, two models, settled in random batches as chat calls
// settle (GroupCommit.run) by completions with random charges and latencies, failures, and items
// that throw after their settlement (rolled back, the job settled in a later batch). After every
// batch usage_daily and key_spend equal the charge entries and job_stats_daily the final jobs, row
// by row (checkInvariants, jobStatsProblems). Runs on PostgreSQL with scripts/test-postgres.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { propertySeeds } from "../helpers/seeds.ts";
import { testQueueServices } from "../helpers/services.ts";
import { checkInvariants, jobStatsProblems } from "../ledger/ledger-helpers.ts";
import { seedJob } from "../queue/seed-jobs.ts";

const SEEDS = propertySeeds(20261128);
const RUNS = Number(process.env.FC_RUNS ?? 8);
const NOW = Date.now();
const MODELS = ["sandbox/image", "sandbox/video"];

interface Step {
  job: number;
  action: "complete" | "fail" | "throw";
  charge: number;
  runMs: number;
}

const step: fc.Arbitrary<Step> = fc.record({
  job: fc.nat(),
  action: fc.oneof(
    { arbitrary: fc.constant("complete" as const), weight: 5 },
    { arbitrary: fc.constantFrom("fail" as const, "throw" as const), weight: 2 },
  ),
  charge: fc.integer({ min: 0, max: 1500 }),
  // Latencies over several 9 % buckets, a few equal.
  runMs: fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 5_000 })),
});

const history = fc.record({
  jobs: fc.array(fc.record({ key: fc.integer({ min: 0, max: 2 }), model: fc.integer({ min: 0, max: 1 }) }), {
    minLength: 1,
    maxLength: 24,
  }),
  batches: fc.array(fc.array(step, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 5 }),
});

describe("folded rollups over random group commits", () => {
  for (const seed of SEEDS) {
    test(`rollups equal the ledger and the jobs after every batch (seed ${seed})`, async () => {
      await fc.assert(
        fc.asyncProperty(history, async (h) => {
          const t = await testQueueServices();
          await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
          const other = await t.ctx.accounts.createKey(t.account.id, { name: "other" });
          const keys = [t.keyId, other.keyId, null];
          const ids: string[] = [];
          for (const j of h.jobs)
            ids.push(
              await seedJob(t.ctx, t.account.id, {
                createdAt: NOW,
                status: "IN_PROGRESS",
                keyId: keys[j.key]!,
                modelId: MODELS[j.model],
              }),
            );
          for (const batch of h.batches) {
            // One job per item of a batch (a job settles once): the first step naming it.
            const seen = new Set<number>();
            const items = batch.filter((s) => {
              const k = s.job % ids.length;
              if (seen.has(k)) return false;
              seen.add(k);
              return true;
            });
            await Promise.allSettled(
              items.map((s) =>
                t.ctx.submits.run(async (sql) => {
                  const jobs = t.ctx.jobs.in(sql);
                  const id = ids[s.job % ids.length]!;
                  if (s.action === "fail") return await jobs.fail(id, "upstream_error", "x", NOW + s.runMs);
                  const ok = await jobs.complete(id, {}, [], BigInt(s.charge), null, 60_000, NOW + s.runMs);
                  if (s.action === "throw" && ok) throw new Error("after the settlement");
                  return ok;
                }),
              ),
            );
            expect(await checkInvariants(t.sql)).toEqual([]);
            expect(await jobStatsProblems(t.sql)).toEqual([]);
          }
        }),
        { seed, numRuns: RUNS },
      );
    });
  }
});
