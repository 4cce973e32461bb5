// The figures above the console's requests list (requestStats, JobStatsStore): exact counts, error
// rate and nearest-rank latency percentiles (as their bucket's bound) over a seeded set of known
// durations, the period's UTC days to the millisecond, the list's other filters, and the 31-day bound.
import { beforeAll, describe, expect, test } from "bun:test";
import { bucketBound, latencyBucket } from "../../src/queue/job-stats-store.ts";
import { listRequests, requestStats, STATS_MAX_DAYS, timingOf } from "../../src/queue/requests.ts";
import { testQueueServices } from "../helpers/services.ts";
import { seedJob } from "./seed-jobs.ts";

const t = await testQueueServices();
const { ctx } = t;
const DAY = Date.UTC(2026, 10, 20); // 2026-11-20 00:00:00.000 UTC
const H = 3_600_000;
const seeded: Record<string, string> = {};
const ids = (...names: string[]) => names.map((k) => seeded[k]!);

beforeAll(async () => {
  await ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  const other = await ctx.accounts.createAccount("other", "USD");
  await ctx.ledger.topUp(other.account.id, 1_000_000n, null);
  const second = await ctx.accounts.createKey(t.account.id, { name: "second" });
  const seed = (name: string, j: Parameters<typeof seedJob>[2], account = t.account.id) =>
    seedJob(ctx, account, { keyId: t.keyId, ...j }).then((id) => {
      seeded[name] = id;
    });
  // On 2026-11-20: 7 finished (total durations 1, 2, 3, 4, 10 s completed; 5, 20 s failed), one
  // cancelled, one still queued. The edges: the day's first millisecond and its last.
  await seed("c1", { createdAt: DAY, status: "COMPLETED", queuedMs: 200, runMs: 800 });
  await seed("c2", { createdAt: DAY + H, status: "COMPLETED", queuedMs: 500, runMs: 1500 });
  await seed("c3", { createdAt: DAY + 2 * H, status: "COMPLETED", queuedMs: 0, runMs: 3000 });
  await seed("c4", { createdAt: DAY + 3 * H, status: "COMPLETED", queuedMs: 1000, runMs: 3000 });
  await seed("c10", {
    createdAt: DAY + 4 * H,
    status: "COMPLETED",
    queuedMs: 4000,
    runMs: 6000,
    modelId: "sandbox/video",
    keyId: second.keyId,
  });
  await seed("f5", { createdAt: DAY + 5 * H, status: "FAILED", queuedMs: 1000, runMs: 4000 });
  await seed("f20", { createdAt: DAY + 24 * H - 1, status: "FAILED", queuedMs: 5000, runMs: 15000 });
  await seed("x", { createdAt: DAY + 6 * H, status: "CANCELLED", cancelAfterMs: 700 });
  await seed("q", { createdAt: DAY + 7 * H, status: "IN_QUEUE" });
  // Outside the day by one millisecond either side, and another account's job inside it.
  await seed("before", { createdAt: DAY - 1, status: "FAILED", queuedMs: 1, runMs: 1 });
  await seed("after", { createdAt: DAY + 24 * H, status: "FAILED", queuedMs: 1, runMs: 1 });
  await seed(
    "theirs",
    { createdAt: DAY + 8 * H, status: "FAILED", keyId: other.keyId, runMs: 1 },
    other.account.id,
  );
});

const day = { from: "2026-11-20", to: "2026-11-20" };
/** What the figures show for an exact latency: its bucket's upper bound. */
const about = (ms: number) => bucketBound(latencyBucket(ms));

describe("requestStats", () => {
  test("counts, error rate and latency percentiles of one day, exactly", async () => {
    const s = await requestStats(ctx, t.account.id, day);
    expect(s).toMatchObject({
      total: 9,
      completed: 5,
      failed: 2,
      cancelled: 1,
      open: 1,
      // Sorted: 1, 2, 3, 4, 5, 10, 20 s. p50 = the ceil(3.5) = 4th; p95 = the ceil(6.65) = 7th,
      // each as its bucket's bound: 4 s is in [2^(95/8), 2^(96/8)) = [3.76 s, 4.096 s).
      p50_ms: 4096,
      p95_ms: about(20_000),
      from: "2026-11-20T00:00:00.000Z",
      until: "2026-11-21T00:00:00.000Z",
      ranged: true,
      clipped: false,
    });
  });

  test("the list shows the same day's requests, edges included, newest first", async () => {
    const page = await listRequests(ctx, t.account.id, day);
    expect(page.items.map((r) => r.id)).toEqual(ids("f20", "q", "x", "f5", "c10", "c4", "c3", "c2", "c1"));
    // From alone and To alone are open on the other side.
    const from = await listRequests(ctx, t.account.id, { from: "2026-11-21" });
    expect(from.items.map((r) => r.id)).toEqual(ids("after"));
    const to = await listRequests(ctx, t.account.id, { to: "2026-11-19" });
    expect(to.items.map((r) => r.id)).toEqual(ids("before"));
  });

  test("the other filters narrow the figures as they narrow the list", async () => {
    expect(await requestStats(ctx, t.account.id, { ...day, status: "FAILED" })).toMatchObject({
      total: 2,
      failed: 2,
      completed: 0,
      p50_ms: about(5000),
      p95_ms: about(20_000),
    });
    expect(await requestStats(ctx, t.account.id, { ...day, modelId: "sandbox/video" })).toMatchObject({
      total: 1,
      p50_ms: about(10_000),
      p95_ms: about(10_000),
    });
    expect(await requestStats(ctx, t.account.id, { ...day, status: "IN_QUEUE" })).toMatchObject({
      total: 1,
      open: 1,
      p50_ms: null,
      p95_ms: null,
    });
  });

  test("without From, or past 31 days, the figures cover the range's last 31 UTC days", async () => {
    const now = DAY + 10 * 86_400_000 + 5 * H;
    const open = await requestStats(ctx, t.account.id, {}, now);
    expect(open.clipped).toBe(true);
    // Whole UTC days, today included: up to the end of today.
    expect(open.until).toBe("2026-12-01T00:00:00.000Z");
    expect(Date.parse(open.until) - Date.parse(open.from)).toBe(STATS_MAX_DAYS * 86_400_000);
    expect(open.total).toBe(11);
    // On 2026-12-20 (any hour) the 31 days start on 2026-11-20: its first millisecond is in, the
    // day before's last is out.
    for (const hour of [0, 23]) {
      const later = await requestStats(ctx, t.account.id, {}, Date.UTC(2026, 11, 20, hour));
      expect(later).toMatchObject({ from: "2026-11-20T00:00:00.000Z", until: "2026-12-21T00:00:00.000Z" });
      expect(later.total).toBe(10);
    }
    // A range of 60 days ending on 2026-12-31: its last 31 days start after the seeded ones.
    const long = await requestStats(ctx, t.account.id, { from: "2026-11-01", to: "2026-12-31" });
    expect(long).toMatchObject({ clipped: true, total: 0, from: "2026-12-01T00:00:00.000Z" });
  });

  test("a job's durations: queued, running, total; live ones to now", () => {
    const job = { status: "COMPLETED" as const, created_at: 1000n, started_at: 1400n, completed_at: 3000n };
    expect(timingOf(job, 99_999)).toEqual({ total_ms: 2000, queued_ms: 400, running_ms: 1600, live: false });
    const queued = { status: "IN_QUEUE" as const, created_at: 1000n, started_at: null, completed_at: null };
    expect(timingOf(queued, 4000)).toEqual({ total_ms: 3000, queued_ms: 3000, running_ms: null, live: true });
    const running = {
      status: "IN_PROGRESS" as const,
      created_at: 1000n,
      started_at: 2000n,
      completed_at: null,
    };
    expect(timingOf(running, 2500)).toEqual({ total_ms: 1500, queued_ms: 1000, running_ms: 500, live: true });
  });
});
