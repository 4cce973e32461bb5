// The money history's retention beside the request records ([retention] ledger_days and
// requests_days): a hold whose job record is kept stays (jobs.hold_id points at it), and goes once
// the request retention deleted the record; the sweep reads ledger_days at each run and does nothing
// by default. Runs on PostgreSQL too (scripts/test-postgres).
import { describe, expect, test } from "bun:test";
import { purgeOldLedger } from "../../src/app/background.ts";
import { money } from "../../src/backup/migrate-verify.ts";
import { liveSettingsFrom } from "../../src/config/load.ts";
import { walletStatement } from "../../src/ledger/statement.ts";
import { countRows } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";
import { seedJob } from "../queue/seed-jobs.ts";

const DAY = 86_400;

async function history() {
  let clock = Date.UTC(2026, 0, 1) / 1000;
  const t = await testQueueServices({ now: () => clock });
  const { ctx } = t;
  await ctx.ledger.topUp(t.account.id, 100_000_000n, "test");
  const job = async (status: "COMPLETED" | "FAILED") =>
    await seedJob(ctx, t.account.id, { createdAt: clock * 1000, runMs: 1000, status, keyId: t.keyId });
  const old = [await job("COMPLETED"), await job("FAILED")];
  clock += 200 * DAY;
  const recent = await job("COMPLETED");
  const holdOf = async (id: string) => (await ctx.jobs.get(id))!.hold_id;
  return { t, ctx, old, recent, holdOf, now: () => clock };
}

describe("ledger retention beside request records", () => {
  test("a hold stays while its job record does, and goes after it", async () => {
    const { t, ctx, old, recent, holdOf, now } = await history();
    const oldHolds = [await holdOf(old[0]!), await holdOf(old[1]!)];
    const cutoff = now() - 100 * DAY;
    // The job records are still there: their holds stay; their entries go (the top-up, a hold and
    // its whole charge, a hold and its release).
    expect(await ctx.ledgerRetention.purge(cutoff)).toEqual({ entries: 5, holds: 0 });
    expect(await countRows(ctx.sql, "ledger_entries WHERE created_at < ?", [cutoff])).toBe(0);
    expect(await countRows(ctx.sql, "holds")).toBe(3);
    // The request retention deletes the old records; the next ledger run their holds.
    expect(await ctx.jobRetention.purgeFinished((cutoff + DAY) * 1000)).toBe(2);
    expect(await ctx.ledgerRetention.purge(cutoff)).toEqual({ entries: 0, holds: 2 });
    for (const h of oldHolds) expect(await ctx.ledger.getHold(h)).toBeNull();
    expect(await ctx.ledger.getHold(await holdOf(recent))).not.toBeNull();
    for (const a of (await money(ctx.sql)).accounts) {
      expect(a.ledger_balance).toBe(a.balance_micro);
      expect(a.ledger_held).toBe(a.held_micro);
    }
    // The API's ledger and the wallet's statement start at the kept entries, figures as they were.
    const api = await ctx.wallet.entries(t.account.id, 50, null);
    expect(api.data.map((e) => e.kind)).toEqual(["charge", "hold"]);
    expect(api.next_cursor).toBeNull();
    const statement = await walletStatement(ctx, t.account.id);
    expect(statement.rows.map((r) => [r.status, r.request_id, r.entries.length])).toEqual([
      ["charged", recent, 2],
    ]);
    expect(String(statement.rows[0]!.balance_after_micro)).toBe(String(api.data[0]!.balance_after_micro));
  });

  test("the sweep reads ledger_days at each run: 0 (the default) keeps everything", async () => {
    const { ctx, now } = await history();
    const entries = await countRows(ctx.sql, "ledger_entries");
    const at = now() * 1000;
    expect(await purgeOldLedger(ctx, at)).toEqual({ entries: 0, holds: 0 });
    expect(await countRows(ctx.sql, "ledger_entries")).toBe(entries);
    ctx.live = { ...ctx.live, retention: liveSettingsFrom({ retention: { ledger_days: 201 } }).retention };
    expect(await purgeOldLedger(ctx, at)).toEqual({ entries: 0, holds: 0 });
    ctx.live = { ...ctx.live, retention: liveSettingsFrom({ retention: { ledger_days: 150 } }).retention };
    expect((await purgeOldLedger(ctx, at)).entries).toBe(5);
  });
});
