// The rollups of a group commit (src/db/rollups.ts): the settlements of one batch write one upsert
// per usage_daily and job_stats_daily row, just before the batch's COMMIT, on SQLite; an item that
// rolls back after its settlement adds nothing; the rollups still equal the ledger and the jobs.
// On PostgreSQL every item is its own transaction and writes its upserts at once (counted too).
import { describe, expect, test } from "bun:test";
import { countStatements } from "../../src/db/sql.ts";
import { onPostgres } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";
import { checkInvariants, jobStatsProblems } from "../ledger/ledger-helpers.ts";
import { seedJob } from "../queue/seed-jobs.ts";

const NOW = Date.now();

async function setUp(jobs: number) {
  const t = await testQueueServices();
  await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++)
    ids.push(await seedJob(t.ctx, t.account.id, { createdAt: NOW, status: "IN_PROGRESS", keyId: t.keyId }));
  return { t, ids };
}

type T = Awaited<ReturnType<typeof setUp>>["t"];

/**
 * Completes job `id` in the next group commit, `runMs` after its start, as a chat call settles
 * (finishChat's `batched` is `run` on SQLite; on PostgreSQL `run` is a transaction per item, so
 * `then` throwing rolls the item back there too).
 */
function completeBatched(t: T, id: string, charge: bigint, runMs: number, then?: () => void) {
  return t.ctx.submits.run(async (sql) => {
    const ok = await t.ctx.jobs.in(sql).complete(id, {}, [], charge, null, 60_000, NOW + runMs);
    then?.();
    return ok;
  });
}

const upserts = (sent: string[], table: string) =>
  sent.filter((s) => s.replace(/^\+ /, "").startsWith(`INSERT INTO ${table}`)).length;

describe("rollups of a group commit", () => {
  test("N settlements of one row in one batch: one upsert per rollup row on SQLite (N on PostgreSQL)", async () => {
    const n = 12;
    const { t, ids } = await setUp(n);
    // Latencies over several buckets (9 % wide): still one job_stats_daily row, one upsert.
    const { value, count } = await countStatements(
      async () => await Promise.all(ids.map((id, i) => completeBatched(t, id, 100n + BigInt(i), 5 + 7 * i))),
    );
    expect(value).toEqual(ids.map(() => true));
    const want = onPostgres ? n : 1;
    expect(upserts(count.sent, "usage_daily"), count.sent.join("\n")).toBe(want);
    expect(upserts(count.sent, "job_stats_daily"), count.sent.join("\n")).toBe(want);
    // key_spend is not folded: a reservation later in the same batch reads it (the key's limit).
    expect(upserts(count.sent, "key_spend"), count.sent.join("\n")).toBe(n);
    expect(await checkInvariants(t.sql)).toEqual([]);
    expect(await jobStatsProblems(t.sql)).toEqual([]);
    const usage = await t.sql.get<{ spent_micro: bigint; calls: bigint }>(
      "SELECT spent_micro, calls FROM usage_daily WHERE key_id = ?",
      [t.keyId],
    );
    // 100 + 101 + ... + 111
    expect(usage).toEqual({ spent_micro: BigInt(n * 100 + (n * (n - 1)) / 2), calls: BigInt(n) });
  });

  test("an item that throws after its settlement adds nothing to the rollups; the batch's others stand", async () => {
    const { t, ids } = await setUp(6);
    const [a, b, bad, c, alsoBad, failed] = ids as [string, string, string, string, string, string];
    const boom = () => {
      throw new Error("after the settlement");
    };
    const results = await Promise.allSettled([
      completeBatched(t, a, 300n, 10),
      completeBatched(t, b, 400n, 2_000),
      completeBatched(t, bad, 500n, 10, boom),
      completeBatched(t, c, 600n, 10),
      completeBatched(t, alsoBad, 700n, 2_000, boom),
      t.ctx.submits.run(
        async (sql) => await t.ctx.jobs.in(sql).fail(failed, "upstream_error", "x", NOW + 50),
      ),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    // The rolled-back items' jobs are still running, their holds open.
    expect((await t.ctx.jobs.get(bad))!.status).toBe("IN_PROGRESS");
    expect((await t.ctx.jobs.get(alsoBad))!.status).toBe("IN_PROGRESS");
    expect(await checkInvariants(t.sql)).toEqual([]);
    expect(await jobStatsProblems(t.sql)).toEqual([]);
    const usage = await t.sql.get<{ spent_micro: bigint; calls: bigint }>(
      "SELECT sum(spent_micro) AS spent_micro, sum(calls) AS calls FROM usage_daily",
    );
    expect(usage).toEqual({ spent_micro: 1300n, calls: 3n });
    // Settled later, in a batch of their own: counted then, once.
    expect(
      await Promise.all([completeBatched(t, bad, 500n, 10), completeBatched(t, alsoBad, 700n, 10)]),
    ).toEqual([true, true]);
    expect(await checkInvariants(t.sql)).toEqual([]);
    expect(await jobStatsProblems(t.sql)).toEqual([]);
  });

  test("a row whose batch holds more latency buckets than one upsert takes is written in parts of 32", async () => {
    const { t, ids } = await setUp(40);
    // Buckets 40 to 79 (32 ms to 1 s), each latency in the middle of its own 9 %-wide bucket.
    const { count } = await countStatements(
      async () =>
        await Promise.all(
          ids.map((id, i) => completeBatched(t, id, 100n, Math.round(2 ** ((40 + i + 0.5) / 8)))),
        ),
    );
    expect(upserts(count.sent, "job_stats_daily")).toBe(onPostgres ? 40 : 2);
    const row = await t.sql.get<{ n: bigint; latency: string }>("SELECT n, latency FROM job_stats_daily");
    expect(row!.n).toBe(40n);
    expect(Object.keys(JSON.parse(row!.latency)).length).toBe(40);
    expect(await jobStatsProblems(t.sql)).toEqual([]);
  });

  test("settlements outside a group commit write their upserts at once, one per settlement", async () => {
    const { t, ids } = await setUp(3);
    const { count } = await countStatements(async () => {
      for (const id of ids) await t.ctx.jobs.complete(id, {}, [], 100n, null, 60_000, NOW + 10);
    });
    expect(upserts(count.sent, "usage_daily")).toBe(3);
    expect(upserts(count.sent, "job_stats_daily")).toBe(3);
    expect(await checkInvariants(t.sql)).toEqual([]);
    expect(await jobStatsProblems(t.sql)).toEqual([]);
  });
});
