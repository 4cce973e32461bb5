// The Requests figures from the rollup against the jobs themselves, over random histories (seeded:
// FC_SEED replays a run): random jobs (keys and none, models, sources, every status, latencies from
// 0 ms to hours) over random UTC days, each through the JobStore's real transitions; then random
// filters (key, model, status, source, From, To or none). The counts equal a count over the jobs
// of the filter's whole UTC days, exactly; p50 and p95 are never below the exact nearest-rank value
// and within one latency bucket of it. Runs on PostgreSQL with scripts/test-postgres.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { JobStatus } from "../../src/queue/job-row.ts";
import { latencyBucket } from "../../src/queue/job-stats-store.ts";
import { requestStats, STATS_MAX_DAYS } from "../../src/queue/requests.ts";
import { propertySeeds } from "../helpers/seeds.ts";
import { testQueueServices } from "../helpers/services.ts";
import { seedJob } from "./seed-jobs.ts";

const SEEDS = propertySeeds(20261127);
const RUNS = Number(process.env.FC_RUNS ?? 20);
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27, 13, 30);
const TODAY = Math.floor(NOW / DAY);
const MODELS = ["sandbox/image", "sandbox/video"];
const STATUSES: JobStatus[] = ["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED"];

const t = await testQueueServices();
const { ctx } = t;
let runs = 0;

interface Job {
  day: number;
  at: number;
  key: number;
  model: number;
  studio: boolean;
  status: number;
  queuedMs: number;
  runMs: number;
}

// Latencies spread over decades (0 ms to about 4.6 hours): 10^(exp/4) - 1, plus jitter.
const latency = fc
  .tuple(fc.integer({ min: 0, max: 28 }), fc.integer({ min: 0, max: 999 }))
  .map(([e, j]) => Math.max(0, Math.floor(10 ** (e / 4)) - 1 + (e > 8 ? j : 0)));

const job: fc.Arbitrary<Job> = fc.record({
  day: fc.integer({ min: 0, max: 40 }),
  // The day's first and last millisecond often, else anywhere in it.
  at: fc.oneof(fc.constant(0), fc.constant(DAY - 1), fc.integer({ min: 0, max: DAY - 1 })),
  key: fc.integer({ min: 0, max: 2 }),
  model: fc.integer({ min: 0, max: 1 }),
  studio: fc.boolean(),
  status: fc.oneof(
    { arbitrary: fc.constantFrom(2, 3), weight: 4 },
    { arbitrary: fc.constantFrom(0, 1, 4), weight: 1 },
  ),
  queuedMs: latency,
  runMs: latency,
});

interface Filter {
  key: number | null;
  model: number | null;
  status: number | null;
  studio: boolean | null;
  /** Days before today; null: none. */
  from: number | null;
  to: number | null;
}

const filter: fc.Arbitrary<Filter> = fc.record({
  // Each filter absent half the time, so most filters still match some jobs.
  key: fc.option(fc.integer({ min: 0, max: 2 }), { freq: 2 }),
  model: fc.option(fc.integer({ min: 0, max: 1 }), { freq: 2 }),
  status: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 2 }),
  studio: fc.option(fc.boolean(), { freq: 2 }),
  from: fc.option(fc.integer({ min: 0, max: 45 }), { freq: 2 }),
  to: fc.option(fc.integer({ min: 0, max: 45 }), { freq: 2 }),
});

const dayText = (back: number) => new Date((TODAY - back) * DAY).toISOString().slice(0, 10);

/** The exact nearest-rank p-th percentile of sorted values. */
const nearestRank = (sorted: number[], p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!;

describe("Requests figures from the rollup", () => {
  test.each(SEEDS)(
    "equal a count over the jobs for random filters (FC_SEED=%d)",
    async (seed) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(job, { minLength: 1, maxLength: 40 }),
          fc.array(filter, { minLength: 1, maxLength: 6 }),
          async (jobs, filters) => {
            const { account } = await ctx.accounts.createAccount(`p${++runs}`, "USD");
            await ctx.ledger.topUp(account.id, 1_000_000_000n, null);
            // Key 2 is "no key" for a job; as a filter, another account's key (nothing matches).
            const keys = [
              (await ctx.accounts.createKey(account.id)).keyId,
              (await ctx.accounts.createKey(account.id)).keyId,
            ];
            const made = [];
            for (const j of jobs) {
              const createdAt = (TODAY - j.day) * DAY + j.at;
              const status = STATUSES[j.status]!;
              await seedJob(ctx, account.id, {
                createdAt,
                status,
                queuedMs: j.queuedMs,
                runMs: j.runMs,
                cancelAfterMs: j.runMs,
                modelId: MODELS[j.model],
                keyId: j.key === 2 ? null : keys[j.key],
                source: j.studio ? "STUDIO" : "API",
              });
              made.push({ ...j, createdAt, statusName: status, ms: j.queuedMs + j.runMs });
            }
            for (const f of filters) {
              const [fromBack, toBack] =
                f.from !== null && f.to !== null && f.from < f.to ? [f.to, f.from] : [f.from, f.to];
              // The figures' period, whole UTC days: To's day included (else today), at most 31 days.
              const endDay = toBack === null ? TODAY + 1 : TODAY - toBack + 1;
              const startDay = Math.max(
                fromBack === null ? -Infinity : TODAY - fromBack,
                endDay - STATS_MAX_DAYS,
              );
              const want = made.filter(
                (j) =>
                  j.createdAt >= startDay * DAY &&
                  j.createdAt < endDay * DAY &&
                  (f.key === null || (f.key !== 2 && j.key === f.key)) &&
                  (f.model === null || j.model === f.model) &&
                  (f.status === null || j.status === f.status) &&
                  (f.studio === null || j.studio === f.studio),
              );
              const count = (s: JobStatus) => want.filter((j) => j.statusName === s).length;
              const got = await requestStats(
                ctx,
                account.id,
                {
                  keyId: f.key === null ? null : f.key === 2 ? t.keyId : keys[f.key],
                  modelId: f.model === null ? null : MODELS[f.model],
                  status: f.status === null ? null : STATUSES[f.status],
                  source: f.studio === null ? null : f.studio ? "STUDIO" : "API",
                  from: fromBack === null ? null : dayText(fromBack),
                  to: toBack === null ? null : dayText(toBack),
                },
                NOW,
              );
              expect(got.from).toBe(new Date(startDay * DAY).toISOString());
              expect(got.until).toBe(new Date(endDay * DAY).toISOString());
              expect({
                total: got.total,
                completed: got.completed,
                failed: got.failed,
                cancelled: got.cancelled,
                open: got.open,
              }).toEqual({
                total: want.length,
                completed: count("COMPLETED"),
                failed: count("FAILED"),
                cancelled: count("CANCELLED"),
                open: count("IN_QUEUE") + count("IN_PROGRESS"),
              });
              const finished = want
                .filter((j) => j.statusName === "COMPLETED" || j.statusName === "FAILED")
                .map((j) => j.ms)
                .sort((a, b) => a - b);
              for (const [p, shown] of [
                [50, got.p50_ms],
                [95, got.p95_ms],
              ] as const) {
                if (finished.length === 0) {
                  expect(shown).toBeNull();
                  continue;
                }
                const exact = nearestRank(finished, p);
                expect(shown).not.toBeNull();
                expect(shown!).toBeGreaterThanOrEqual(exact);
                expect(Math.abs(latencyBucket(shown!) - latencyBucket(exact))).toBeLessThanOrEqual(1);
              }
            }
          },
        ),
        { seed, numRuns: RUNS },
      );
    },
    120_000,
  );
});
