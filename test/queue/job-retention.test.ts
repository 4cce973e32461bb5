// The request retention ([retention] requests_days, src/queue/job-retention-store.ts): finished jobs
// older than the cutoff go with their logs, webhook deliveries and upstream callbacks; open and
// recent jobs and every money row stay. On both databases (through the Sql port).
import { describe, expect, test } from "bun:test";
import { purgeOldRequests } from "../../src/app/background.ts";
import { liveSettingsFrom } from "../../src/config/load.ts";
import type { Sql } from "../../src/db/sql.ts";
import { countRows } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";
import { type SeedJob, seedJob } from "./seed-jobs.ts";

const DAY = 86_400_000;

/** Every money row of the database, in order: the purge must leave them exactly as they were. */
async function moneyRows(sql: Sql) {
  return {
    entries: await sql.all("SELECT * FROM ledger_entries ORDER BY id"),
    holds: await sql.all("SELECT * FROM holds ORDER BY id"),
    accounts: await sql.all("SELECT id, balance_micro, held_micro FROM accounts ORDER BY id"),
    keySpend: await sql.all("SELECT * FROM key_spend ORDER BY key_id, month, model_id"),
  };
}

async function seeded() {
  const t = await testQueueServices();
  const { ctx } = t;
  await ctx.ledger.topUp(t.account.id, 100_000_000n, "test");
  const now = Date.now();
  const old = now - 100 * DAY;
  const job = (j: SeedJob) => seedJob(ctx, t.account.id, { keyId: t.keyId, runMs: 1000, ...j });
  const purged = [
    await job({ createdAt: old, status: "COMPLETED" }),
    await job({ createdAt: old + 1, status: "COMPLETED", chargeUsdMicro: 400n }),
    await job({ createdAt: old + 2, status: "FAILED" }),
    await job({ createdAt: old + 3, status: "CANCELLED" }),
  ];
  const kept = {
    recent: await job({ createdAt: now - DAY, status: "COMPLETED" }),
    // Open for 100 days (a stuck job): never purged, whatever its age.
    queued: await job({ createdAt: old + 4, status: "IN_QUEUE" }),
    running: await job({ createdAt: old + 5, status: "IN_PROGRESS" }),
  };
  // What hangs off each job: two log lines, a webhook delivery, an upstream's final answer.
  for (const id of [...purged, kept.recent, kept.running]) {
    await ctx.jobLogs.append(id, "info", "queued", old);
    await ctx.jobLogs.append(id, "info", "done", old);
    await ctx.outbox.enqueue({
      requestId: id,
      accountId: t.account.id,
      url: "https://h.test/",
      event: "COMPLETED",
    });
    await ctx.sql.run(
      "INSERT INTO upstream_callbacks (job_id, provider, payload, received_at) VALUES (?, 'cog', '{}', ?)",
      [id, now],
    );
  }
  return { t, ctx, now, purged, kept };
}

/** How many rows of each table hang off `ids`. */
async function children(sql: Sql, ids: string[]) {
  const list = ids.map(() => "?").join(", ");
  return {
    jobs: await countRows(sql, `jobs WHERE id IN (${list})`, ids),
    logs: await countRows(sql, `job_logs WHERE job_id IN (${list})`, ids),
    deliveries: await countRows(sql, `webhook_deliveries WHERE request_id IN (${list})`, ids),
    callbacks: await countRows(sql, `upstream_callbacks WHERE job_id IN (${list})`, ids),
  };
}

describe("request retention", () => {
  test("deletes finished jobs past the cutoff with their logs, deliveries and callbacks; money stays", async () => {
    const { ctx, now, purged, kept } = await seeded();
    const money = await moneyRows(ctx.sql);
    expect(await children(ctx.sql, purged)).toEqual({ jobs: 4, logs: 8, deliveries: 4, callbacks: 4 });

    expect(await ctx.jobRetention.purgeFinished(now - 90 * DAY)).toBe(4);

    expect(await children(ctx.sql, purged)).toEqual({ jobs: 0, logs: 0, deliveries: 0, callbacks: 0 });
    expect(await children(ctx.sql, [kept.recent, kept.running])).toEqual({
      jobs: 2,
      logs: 4,
      deliveries: 2,
      callbacks: 2,
    });
    expect((await ctx.jobs.get(kept.queued))?.status).toBe("IN_QUEUE");
    // The holds and ledger entries of the purged jobs, the balances and the spend rollup: unchanged.
    expect(await moneyRows(ctx.sql)).toEqual(money);
    expect(money.holds.length).toBe(7);
    // A second run finds nothing more.
    expect(await ctx.jobRetention.purgeFinished(now - 90 * DAY)).toBe(0);
  });

  test("the cutoff is the job's end: a job that ended just after it stays", async () => {
    const t = await testQueueServices();
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, "test");
    const cutoff = Date.now() - 10 * DAY;
    const before = await seedJob(t.ctx, t.account.id, {
      createdAt: cutoff - 2000,
      runMs: 1000,
      status: "COMPLETED",
    });
    // Created before the cutoff, ended after it.
    const after = await seedJob(t.ctx, t.account.id, {
      createdAt: cutoff - 500,
      runMs: 1000,
      status: "COMPLETED",
    });
    expect(await t.ctx.jobRetention.purgeFinished(cutoff)).toBe(1);
    expect(await t.ctx.jobs.get(before)).toBeNull();
    expect((await t.ctx.jobs.get(after))?.status).toBe("COMPLETED");
  });

  test("the sweep reads requests_days at each run; 0 keeps every record", async () => {
    const { ctx, now, purged } = await seeded();
    ctx.live = { ...ctx.live, retention: liveSettingsFrom({ retention: { requests_days: 0 } }).retention };
    expect(await purgeOldRequests(ctx, now)).toBe(0);
    expect((await children(ctx.sql, purged)).jobs).toBe(4);
    // 101 days: the jobs ended 100 days ago stay.
    ctx.live = { ...ctx.live, retention: liveSettingsFrom({ retention: { requests_days: 101 } }).retention };
    expect(await purgeOldRequests(ctx, now)).toBe(0);
    ctx.live = { ...ctx.live, retention: liveSettingsFrom({}).retention };
    expect(await purgeOldRequests(ctx, now)).toBe(4);
  });

  test("a purged job's outputs are not downloadable and go with their own expiry", async () => {
    const { ctx, now, purged } = await seeded();
    const id = purged[0]!;
    await ctx.jobOutputs.record(
      id,
      [{ idx: 0, path: `outputs/${id}/0.png`, contentType: "image/png", size: 3, sha256: "x" }],
      now - 100 * DAY,
      now + DAY,
    );
    expect((await ctx.jobOutputs.file(id, 0))?.path).toBe(`outputs/${id}/0.png`);
    await ctx.jobRetention.purgeFinished(now - 90 * DAY);
    // The download reads the output with its job's account: no job, no file (404).
    expect(await ctx.jobOutputs.file(id, 0)).toBeNull();
    expect(await countRows(ctx.sql, "job_outputs WHERE job_id = ?", [id])).toBe(1);
    expect((await ctx.files.sweep(now + 2 * DAY)).outputs).toBe(1);
    expect(await countRows(ctx.sql, "job_outputs WHERE job_id = ?", [id])).toBe(0);
  });

  test("a delivery still pending for a purged request goes with it; other requests' stay", async () => {
    const { ctx, now, purged, kept } = await seeded();
    const pending = await ctx.sql.all<{ id: string }>(
      "SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY id",
    );
    expect(pending.length).toBe(6);
    await ctx.jobRetention.purgeFinished(now - 90 * DAY);
    const left = await ctx.sql.all<{ request_id: string }>(
      "SELECT request_id FROM webhook_deliveries ORDER BY 1",
    );
    expect(left.map((r) => r.request_id)).toEqual([kept.recent, kept.running].sort());
    expect(await ctx.outbox.deliveryFor(purged[0]!)).toBeNull();
    expect((await ctx.outbox.deliveryFor(kept.recent))?.status).toBe("pending");
  });
});
