// The money history's retention ([retention] ledger_days, src/ledger/ledger-retention.ts), seeded:
// random histories over a clock that moves by hours and days, then a purge at a random cutoff with
// small batches. What must hold (docs/money.md "Retention"): every account keeps the newest part of
// its entries, exactly those dated from the cutoff on plus its newest one, unchanged; the figures
// still add up from the first kept entry (the check `gengate migrate-data` runs); open holds and
// holds something points at stay; the ledger keeps working after it. On both databases.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { money } from "../../src/backup/migrate-verify.ts";
import type { Sql } from "../../src/db/sql.ts";
import { LedgerRetentionStore } from "../../src/ledger/ledger-retention.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { dialects } from "../helpers/postgres.ts";
import { newAccount, openLedger, reserveUsd } from "./ledger-helpers.ts";

const SEED = Number(process.env.FC_SEED ?? 20261128);
const RUNS = Number(process.env.FC_RUNS ?? 40);

type Op =
  | { t: "topup"; account: number; amount: number }
  | { t: "debit"; account: number; amount: number }
  | { t: "reserve"; account: number; amount: number }
  | { t: "settle"; hold: number; fraction: number }
  | { t: "release"; hold: number }
  | { t: "wait"; hours: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant("topup" as const),
    account: fc.nat(2),
    amount: fc.integer({ min: 1, max: 9_000 }),
  }),
  fc.record({
    t: fc.constant("debit" as const),
    account: fc.nat(2),
    amount: fc.integer({ min: 1, max: 2_000 }),
  }),
  {
    arbitrary: fc.record({
      t: fc.constant("reserve" as const),
      account: fc.nat(2),
      amount: fc.integer({ min: 0, max: 3_000 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("settle" as const),
      hold: fc.nat(60),
      fraction: fc.integer({ min: 0, max: 100 }),
    }),
    weight: 3,
  },
  fc.record({ t: fc.constant("release" as const), hold: fc.nat(60) }),
  {
    arbitrary: fc.record({ t: fc.constant("wait" as const), hours: fc.integer({ min: 1, max: 24 * 20 }) }),
    weight: 2,
  },
);

interface Entry {
  id: bigint;
  account_id: string;
  created_at: bigint;
  hold_id: string | null;
}

const entries = async (sql: Sql) =>
  await sql.all<Entry & Record<string, unknown>>("SELECT * FROM ledger_entries ORDER BY id");
const holds = async (sql: Sql) =>
  await sql.all<{ id: string; status: string; resolved_at: bigint | null }>(
    "SELECT id, status, resolved_at FROM holds ORDER BY id",
  );

describe.each(dialects())("ledger retention (seeded), %s", (dialect) => {
  test("a purge keeps each account's newest entries, its figures and every hold still pointed at", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 1, max: 7 }),
        async (ops, cutAt, limit) => {
          const start = Date.UTC(2026, 0, 1) / 1000;
          let clock = start;
          const { sql, accounts, ledger, close } = await openLedger(dialect, { now: () => clock });
          try {
            const ids = [
              (await newAccount(accounts)).account.id,
              (await newAccount(accounts)).account.id,
              (await newAccount(accounts)).account.id,
            ];
            const open: string[] = [];
            const all: string[] = [];
            for (const o of ops) {
              try {
                if (o.t === "topup") await ledger.topUp(ids[o.account]!, BigInt(o.amount), null);
                else if (o.t === "debit") await ledger.adjust(ids[o.account]!, -BigInt(o.amount), "test");
                else if (o.t === "reserve") {
                  const h = await reserveUsd(ledger, ids[o.account]!, BigInt(o.amount));
                  open.push(h.id);
                  all.push(h.id);
                } else if (o.t === "settle" || o.t === "release") {
                  const id = all[o.hold % Math.max(all.length, 1)];
                  if (!id) continue;
                  if (o.t === "settle") {
                    const h = (await ledger.getHold(id))!;
                    await ledger.settle(id, (h.quoted_usd_micro * BigInt(o.fraction)) / 100n);
                  } else await ledger.release(id);
                } else clock += o.hours * 3600;
              } catch (err) {
                // Refusals (insufficient balance, an adjustment below the held money) write nothing.
                if (!(err instanceof DomainError)) throw err;
              }
            }
            const end = clock;
            const cutoff = start + Math.floor(((end - start + 1) * cutAt) / 100);
            const before = await entries(sql);
            const holdsBefore = await holds(sql);

            const store = new LedgerRetentionStore(sql);
            const purged = await store.purge(cutoff, undefined, limit);

            const after = await entries(sql);
            // Exactly the entries dated from the cutoff on, and each account's newest, unchanged.
            const newest = new Map<string, bigint>();
            for (const e of before) newest.set(e.account_id, e.id);
            const expected = before.filter(
              (e) => Number(e.created_at) >= cutoff || newest.get(e.account_id) === e.id,
            );
            expect(after).toEqual(expected);
            expect(purged.entries).toBe(before.length - expected.length);

            // The figures add up from the first kept entry, as migrate-data verifies them.
            const m = await money(sql);
            for (const a of m.accounts) {
              expect(a.ledger_balance).toBe(a.balance_micro);
              expect(a.ledger_held).toBe(a.held_micro);
              expect(a.open_holds).toBe(a.held_micro);
            }

            // Holds: gone only when resolved before the cutoff and no kept entry names them.
            const named = new Set(after.map((e) => e.hold_id).filter((h) => h !== null));
            const keptHolds = new Set((await holds(sql)).map((h) => h.id));
            for (const h of holdsBefore) {
              const mayGo = h.status !== "open" && Number(h.resolved_at) < cutoff && !named.has(h.id);
              expect(keptHolds.has(h.id)).toBe(!mayGo);
            }
            expect(purged.holds).toBe(holdsBefore.length - keptHolds.size);

            // Nothing more to do at the same cutoff; the ledger goes on.
            expect(await store.purge(cutoff, undefined, limit)).toEqual({ entries: 0, holds: 0 });
            await ledger.topUp(ids[0]!, 1_000n, null);
            const h = await reserveUsd(ledger, ids[0]!, 500n);
            await ledger.settle(h.id, 200n);
            for (const a of (await money(sql)).accounts) {
              expect(a.ledger_balance).toBe(a.balance_micro);
              expect(a.ledger_held).toBe(a.held_micro);
            }
          } finally {
            await close();
          }
        },
      ),
      { seed: SEED, numRuns: dialect === "postgres" ? Math.ceil(RUNS / 2) : RUNS },
    );
  });
});
