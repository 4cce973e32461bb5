import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { overview, usage, usageCsv, walletCsv } from "../../src/ledger/figures.ts";
import { monthOf } from "../../src/ledger/month.ts";
import { countRows } from "../helpers/backend.ts";
import { json } from "../helpers/context.ts";
import { csvObjects, csvText } from "../helpers/csv.ts";
import { checkInvariants } from "./ledger-helpers.ts";
import { caseArb, decimalMicro, lastDayOf, runCases, sumBy } from "./truth-cases.ts";

/**
 * Issue 15, "One source of truth" (seeded; FC_SEED replays a run, FC_RUNS runs more): a random mix
 * of jobs through the real submit, worker, chat and cancel paths (completed, failed, cancelled,
 * partial deliveries; a USD and a RUB account; several keys and models; charges spread over days
 * and months by the ledger's injected clock). Then, for every month touched and each account, the
 * overview, the usage figures (per model, per key, per day summed to the month), the usage CSV,
 * GET /v1/account/spend, GET /v1/account and the wallet's charge entries agree to the micro-unit,
 * and with the settled holds (an independent sum).
 */
const SEED = Number(process.env.FC_SEED ?? 20261123);
const RUNS = Number(process.env.FC_RUNS ?? 25);

/** What the runs exercised (checked at the end, so a generator change cannot hollow the test). */
const seen = { statuses: new Set<string>(), months: 0, rubCharges: 0, partial: 0, keys: new Set<number>() };

describe("one source of truth (seeded)", () => {
  test("overview, usage, its CSV, GET /v1/account/spend, GET /v1/account and the wallet agree to the micro-unit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: 4, maxLength: 14 }), async (cases) => {
        const { t, accounts, now } = await runCases(cases);
        const { ctx } = t;
        expect(await checkInvariants(t.ctx.sql)).toEqual([]);
        for (const r of await ctx.sql.all<{ status: string }>("SELECT status FROM jobs"))
          seen.statuses.add(r.status);
        seen.partial += await countRows(
          ctx.sql,
          `jobs j JOIN holds h ON h.id = j.hold_id WHERE j.status = 'COMPLETED' AND h.charged_micro < h.amount_micro`,
        );
        seen.rubCharges += await countRows(
          ctx.sql,
          "holds WHERE account_id = ? AND status = 'settled' AND charged_micro > 0",
          [accounts[1]!.id],
        );
        for (const c of cases) seen.keys.add(c.key);

        for (const a of accounts) {
          const key = a.keys[0]!;
          // Independent oracle: what the settled holds of this account charged, per month of settlement.
          const holds = await ctx.sql.all<{ charged_micro: bigint; resolved_at: bigint }>(
            "SELECT charged_micro, resolved_at FROM holds WHERE account_id = ? AND status = 'settled'",
            [a.id],
          );
          const oracle = sumBy(
            holds,
            (h) => monthOf(Number(h.resolved_at)),
            (h) => h.charged_micro,
          );
          const wallet = csvObjects(await csvText(walletCsv(ctx, a.id))).filter((r) => r.kind === "charge");
          const walletByMonth = sumBy(
            wallet,
            (r) => r.created_at!.slice(0, 7),
            (r) => BigInt(r.amount_micro!),
          );
          const months = [...new Set([...oracle.keys(), monthOf(now())])].sort();
          seen.months = Math.max(seen.months, months.length);

          for (const month of months) {
            const spend = await json<{
              total_micro: string;
              by_key: { key_id: string; spent_micro: string; calls: number }[];
              by_model: { model_id: string; spent_micro: string; calls: number }[];
              by_key_and_model: { key_id: string; model_id: string; spent_micro: string }[];
            }>(await t.request(`/v1/account/spend?month=${month}`, { key }));
            const total = BigInt(spend.total_micro);
            expect(total).toBe(oracle.get(month) ?? 0n);
            expect(walletByMonth.get(month) ?? 0n).toBe(total);

            const u = await usage(ctx, a.id, { from: `${month}-01`, to: lastDayOf(month) });
            expect(u.total_micro).toBe(total);
            expect(u.by_month).toEqual([{ month, spent_micro: total, calls: u.calls }]);
            expect(u.by_day.reduce((s, d) => s + d.spent_micro, 0n)).toBe(total);
            expect(u.calls).toBe(spend.by_key.reduce((s, k) => s + k.calls, 0));
            const apiByModel = new Map(spend.by_model.map((m) => [m.model_id, BigInt(m.spent_micro)]));
            expect(new Map(u.by_model.map((m) => [m.model_id, m.spent_micro]))).toEqual(apiByModel);
            const apiByKey = new Map(spend.by_key.map((k) => [k.key_id, BigInt(k.spent_micro)]));
            expect(new Map(u.by_key.map((k) => [k.key_id!, k.spent_micro]))).toEqual(apiByKey);
            const apiCells = new Map(
              spend.by_key_and_model.map((c) => [`${c.key_id}|${c.model_id}`, BigInt(c.spent_micro)]),
            );
            expect(
              sumBy(
                u.rows,
                (r) => `${r.key_id}|${r.model_id}`,
                (r) => r.spent_micro,
              ),
            ).toEqual(apiCells);

            // The CSV: its micro and decimal columns, per key and model, sum to the same numbers.
            const rows = csvObjects(await csvText(usageCsv(u)));
            expect(rows.reduce((s, r) => s + BigInt(r.amount_micro!), 0n)).toBe(total);
            for (const r of rows) expect(decimalMicro(r.amount!)).toBe(BigInt(r.amount_micro!));
            expect(
              sumBy(
                rows,
                (r) => `${r.key_id}|${r.model_id}`,
                (r) => BigInt(r.amount_micro!),
              ),
            ).toEqual(apiCells);
          }

          // The overview of the current month is GET /v1/account's figure and the usage's.
          const o = await overview(ctx, a.id);
          const account = await json<Record<string, string>>(await t.request("/v1/account", { key }));
          expect(o.month).toBe(account.month!);
          expect(o.month_spent_micro).toBe(BigInt(account.month_spent_micro!));
          expect(o.balance_micro).toBe(BigInt(account.balance_micro!));
          expect(o.held_micro).toBe(BigInt(account.held_micro!));
          expect(o.available_micro).toBe(BigInt(account.available_micro!));
          const current = await usage(ctx, a.id, { from: `${o.month}-01`, to: lastDayOf(o.month) });
          expect(o.month_spent_micro).toBe(current.total_micro);
          expect(o.keys.reduce((s, k) => s + k.spent_micro, 0n)).toBe(o.month_spent_micro);
          expect(new Map(o.by_model.map((m) => [m.model_id, m.spent_micro]))).toEqual(
            new Map(current.by_model.map((m) => [m.model_id, m.spent_micro])),
          );
          // The whole range at once: every charge of the account, as the wallet lists them.
          const all = await usage(ctx, a.id, {
            from: `${months[0]}-01`,
            to: lastDayOf(months[months.length - 1]!),
          });
          expect(all.total_micro).toBe(wallet.reduce((s, r) => s + BigInt(r.amount_micro!), 0n));
          expect(all.by_month.reduce((s, m) => s + m.spent_micro, 0n)).toBe(all.total_micro);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect([...seen.statuses].sort()).toEqual(["CANCELLED", "COMPLETED", "FAILED"]);
    expect(seen.months).toBeGreaterThanOrEqual(3);
    expect(seen.rubCharges).toBeGreaterThan(0);
    expect(seen.partial).toBeGreaterThan(0);
    expect(seen.keys.size).toBe(3);
  }, 120_000);
});
