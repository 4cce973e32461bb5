// Money in meets the bar of money out (issue 16): a seeded property test that interleaves redeem
// codes, Stripe and YooKassa payments with duplicated, replayed, concurrent, reordered, tampered and
// forged notifications, operator adjustments and refunds, reservations and settlements, and time
// passing (throttle windows, order expiry). After every step it checks, from the tables:
//   balance = sum of ledger entries; held = sum of open holds; nothing below zero;
//   sum of TOPUP entries = paid orders + redeemed codes (per account), and = what the model expects;
//   every paid order and redeemed code credited exactly once, nothing else credited at all;
//   each order's refund entries = its refunded amount.
// The notifications go through the real webhook routes (raw body, Stripe-Signature) into the app,
// and YooKassa's are verified against the local mock of its API, as in production.

import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { adjustAccount } from "../../src/admin/operations.ts";
import type { Sql } from "../../src/db/sql.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { onPostgres } from "../helpers/backend.ts";
import { paymentsApp } from "../payments/helpers.ts";
import { checkInvariants } from "./ledger-helpers.ts";

/** Seeded: FC_SEED reproduces a run; fast-check prints the seed and the shrunk case on failure. */
const SEED = Number(process.env.FC_SEED ?? 20261123);
// On PostgreSQL (GENGATE_TEST_BACKEND=postgres) every step's checks are round trips: 25 runs take
// about 70 s there, so 10 runs of the same seed by default.
const RUNS = Number(process.env.FC_RUNS ?? (onPostgres ? 10 : 25));
const RUB_RATE = 90_000_000n; // micro-RUB per USD

type Acct = 0 | 1; // 0: USD (Stripe), 1: RUB (YooKassa)
type Notice = "pay" | "replay" | "burst" | "tampered" | "forged" | "stale" | "expire" | "foreign";
type Op =
  | { t: "code"; cur: Acct; units: number; expires: boolean }
  | { t: "redeem"; acct: Acct; code: number; garble: boolean }
  | { t: "checkout"; acct: Acct; units: number }
  | { t: "notify"; order: number; kind: Notice }
  | { t: "reserve"; acct: Acct; usdMilli: number }
  | { t: "settle"; hold: number; percent: number }
  | { t: "release"; hold: number }
  | { t: "adjust"; acct: Acct; units: number }
  | { t: "refund"; order: number; part: boolean }
  | { t: "tick"; minutes: number }
  | { t: "sweep" };

const acct = fc.constantFrom<Acct>(0, 1);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant("code" as const),
    cur: acct,
    units: fc.integer({ min: 1, max: 50 }),
    expires: fc.boolean(),
  }),
  {
    arbitrary: fc.record({ t: fc.constant("redeem" as const), acct, code: fc.nat(12), garble: fc.boolean() }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("checkout" as const),
      acct,
      units: fc.integer({ min: 5, max: 60 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("notify" as const),
      order: fc.nat(10),
      kind: fc.constantFrom<Notice>(
        "pay",
        "pay",
        "replay",
        "burst",
        "tampered",
        "forged",
        "stale",
        "expire",
        "foreign",
      ),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("reserve" as const),
      acct,
      usdMilli: fc.integer({ min: 0, max: 40_000 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("settle" as const),
      hold: fc.nat(20),
      percent: fc.integer({ min: 0, max: 120 }),
    }),
    weight: 2,
  },
  fc.record({ t: fc.constant("release" as const), hold: fc.nat(20) }),
  fc.record({ t: fc.constant("adjust" as const), acct, units: fc.integer({ min: -40, max: 40 }) }),
  fc.record({ t: fc.constant("refund" as const), order: fc.nat(10), part: fc.boolean() }),
  fc.record({ t: fc.constant("tick" as const), minutes: fc.integer({ min: 1, max: 24 * 60 }) }),
  fc.record({ t: fc.constant("sweep" as const) }),
);

/** One unit of money in the account's currency: 1 USD, or 100 RUB. */
const UNIT: Record<Acct, bigint> = { 0: 1_000_000n, 1: 100_000_000n };

interface ModelOrder {
  id: string;
  acct: Acct;
  ref: string;
  amount: bigint;
  /** The provider took the money (a genuine pay was sent). */
  paid: boolean;
  credited: boolean;
  /** failed/canceled orders are final and never credited. */
  final: boolean;
  refunded: bigint;
  /** A Stripe event body already delivered, for replays. */
  sent: string | null;
}

function codeOf(e: unknown): string {
  if (e instanceof DomainError) return e.code;
  throw e;
}

/** The invariants of money in, from the tables; `credited` is what the model expects per account. */
async function moneyInProblems(sql: Sql, accounts: string[], credited: bigint[]): Promise<string[]> {
  const problems = await checkInvariants(sql);
  const sum = async (query: string, id: string) =>
    (await sql.get<{ s: bigint | null }>(query, [id]))!.s ?? 0n;
  for (const [i, id] of accounts.entries()) {
    const topups = await sum(
      "SELECT sum(amount_micro) AS s FROM ledger_entries WHERE account_id = ? AND source = 'TOPUP'",
      id,
    );
    const paid = await sum(
      "SELECT sum(amount_micro) AS s FROM orders WHERE account_id = ? AND status = 'paid'",
      id,
    );
    const codes = await sum(
      "SELECT sum(b.amount_micro) AS s FROM redeem_codes c JOIN redeem_batches b ON b.id = c.batch_id WHERE c.redeemed_account_id = ?",
      id,
    );
    if (topups !== paid + codes)
      problems.push(`${id}: TOPUP ${topups} != paid orders ${paid} + codes ${codes}`);
    if (topups !== credited[i]) problems.push(`${id}: TOPUP ${topups} != model ${credited[i]}`);
  }
  // Each cause credited exactly once, and only causes that are paid or redeemed.
  const twice = await sql.all<{ ref_id: string; n: bigint }>(
    "SELECT ref_id, count(*) AS n FROM ledger_entries WHERE kind = 'topup' AND source = 'TOPUP' GROUP BY ref_id HAVING count(*) <> 1",
  );
  for (const r of twice) problems.push(`${r.ref_id} credited ${r.n} times`);
  const unpaid = await sql.all<{ ref_id: string }>(
    `SELECT e.ref_id FROM ledger_entries e WHERE e.source = 'TOPUP' AND NOT EXISTS
       (SELECT 1 FROM orders o WHERE o.id = e.ref_id AND o.status = 'paid' AND o.account_id = e.account_id
          AND o.amount_micro = e.amount_micro)
     AND NOT EXISTS (SELECT 1 FROM redeem_codes c JOIN redeem_batches b ON b.id = c.batch_id
       WHERE c.id = e.ref_id AND c.redeemed_account_id = e.account_id AND b.amount_micro = e.amount_micro)`,
  );
  for (const r of unpaid) problems.push(`${r.ref_id}: credited but not a paid order or a redeemed code`);
  const paidNoCredit = await sql.all<{ id: string }>(
    "SELECT id FROM orders o WHERE status = 'paid' AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.ref_id = o.id AND e.kind = 'topup')",
  );
  for (const r of paidNoCredit) problems.push(`${r.id}: paid but never credited`);
  const refunds = await sql.all<{ id: string; refunded_micro: bigint; s: bigint | null }>(
    `SELECT o.id, o.refunded_micro, (SELECT -sum(balance_delta_micro) FROM ledger_entries e
       WHERE e.ref_id = o.id AND e.kind = 'adjustment') AS s FROM orders o`,
  );
  for (const r of refunds)
    if (r.refunded_micro !== (r.s ?? 0n))
      problems.push(`${r.id}: refunded ${r.refunded_micro} != entries ${r.s}`);
  return problems;
}

const apps: Awaited<ReturnType<typeof paymentsApp>>[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

describe("money in (seeded property test)", () => {
  test("codes, payments with hostile notifications, adjustments, refunds and jobs keep every invariant", async () => {
    let steps = 0;
    const seen = new Map<string, number>();
    const stats = {
      stripeCredits: 0,
      yookassaCredits: 0,
      codesRedeemed: 0,
      refunds: 0,
      throttled: 0,
      adjustRefused: 0,
    };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 30, maxLength: 80, size: "max" }), async (ops) => {
        const t = await paymentsApp();
        apps.push(t);
        await t.ctx.fx.set("RUB", RUB_RATE, "test");
        const ids = [t.account.id, (await t.ctx.accounts.createAccount("rub", "RUB")).account.id];
        const credited = [0n, 0n];
        const codes: { code: string; cur: Acct; amount: bigint; expiresAt: number | null; used: boolean }[] =
          [];
        const failures: number[][] = [[], []]; // failed redeem times per account (throttle window)
        const checkouts: number[][] = [[], []];
        const orders: ModelOrder[] = [];
        const holds: string[] = [];
        const check = async (what: string) => {
          steps++;
          const problems = await moneyInProblems(t.ctx.sql, ids, credited);
          if (problems.length) throw new Error(`after ${what}: ${problems.join("; ")}`);
        };

        try {
          for (const o of ops) {
            const now = t.clock.now;
            switch (o.t) {
              case "code": {
                const amount = BigInt(o.units) * UNIT[o.cur];
                const expiresAt = o.expires ? now + 3 * 3600 : null;
                const made = await t.ctx.codes.createBatch({
                  amountMicro: amount,
                  currency: o.cur === 0 ? "USD" : "RUB",
                  count: 1,
                  expiresAt,
                  note: null,
                  createdBy: null,
                });
                codes.push({ code: made.codes[0]!, cur: o.cur, amount, expiresAt, used: false });
                break;
              }
              case "redeem": {
                const c = codes[o.code % Math.max(1, codes.length)];
                if (!c) break;
                const recent = failures[o.acct]!.filter((at) => at > now - 3600);
                const text = o.garble ? `${c.code.slice(0, -1)}${c.code.endsWith("A") ? "B" : "A"}` : c.code;
                let expected: string;
                if (recent.length >= 5) expected = "rate_limited";
                else if (o.garble || c.used || (c.expiresAt !== null && c.expiresAt <= now))
                  expected = "invalid_code";
                else if (c.cur !== o.acct) expected = "currency_mismatch";
                else expected = "ok";
                let got = "ok";
                try {
                  const r = await t.ctx.codes.redeem(ids[o.acct]!, text, "property");
                  expect(r.amountMicro).toBe(c.amount);
                } catch (e) {
                  got = codeOf(e);
                }
                expect(`redeem: ${got}`).toBe(`redeem: ${expected}`);
                if (got === "rate_limited") stats.throttled++;
                if (got === "ok") {
                  stats.codesRedeemed++;
                  c.used = true;
                  credited[o.acct]! += c.amount;
                } else if (got !== "rate_limited") failures[o.acct]!.push(now);
                break;
              }
              case "checkout": {
                const recent = checkouts[o.acct]!.filter((at) => at > now - 3600);
                const amount = BigInt(o.units) * UNIT[o.acct] * (o.acct === 0 ? 1n : 1n);
                let got = "ok";
                try {
                  const { order } = await t.ctx.payments.startCheckout({
                    accountId: ids[o.acct]!,
                    personId: null,
                    email: null,
                    provider: o.acct === 0 ? "stripe" : "yookassa",
                    amountMicro: amount,
                  });
                  expect(order.status).toBe("pending");
                  orders.push({
                    id: order.id,
                    acct: o.acct,
                    ref: order.provider_ref!,
                    amount,
                    paid: false,
                    credited: false,
                    final: false,
                    refunded: 0n,
                    sent: null,
                  });
                } catch (e) {
                  got = codeOf(e);
                }
                expect(`checkout: ${got}`).toBe(`checkout: ${recent.length >= 20 ? "rate_limited" : "ok"}`);
                if (got === "ok") checkouts[o.acct]!.push(now);
                break;
              }
              case "notify": {
                const order = orders[o.order % Math.max(1, orders.length)];
                if (!order) break;
                await notify(t, order, o.kind, orders);
                if (order.paid && !order.final && !order.credited) {
                  if (order.acct === 0) stats.stripeCredits++;
                  else stats.yookassaCredits++;
                  order.credited = true;
                  credited[order.acct]! += order.amount;
                }
                break;
              }
              case "reserve": {
                try {
                  const h = await t.ctx.ledger.reserve({
                    accountId: ids[o.acct]!,
                    keyId: null,
                    modelId: "m",
                    requestId: null,
                    source: "API",
                    quotedUsdMicro: BigInt(o.usdMilli) * 1000n,
                  });
                  holds.push(h.id);
                } catch (e) {
                  expect(codeOf(e)).toBe("insufficient_balance");
                }
                break;
              }
              case "settle":
              case "release": {
                const id = holds[o.hold % Math.max(1, holds.length)];
                if (!id) break;
                const hold = (await t.ctx.ledger.getHold(id))!;
                if (o.t === "release") await t.ctx.ledger.release(id);
                else await t.ctx.ledger.settle(id, (hold.quoted_usd_micro * BigInt(o.percent)) / 100n);
                break;
              }
              case "adjust": {
                if (o.units === 0) break;
                const delta = BigInt(o.units) * UNIT[o.acct];
                const a = (await t.ctx.accounts.getAccount(ids[o.acct]!))!;
                const fits = a.balance_micro + delta >= a.held_micro;
                let got = "ok";
                try {
                  await adjustAccount(t.ctx, ids[o.acct]!, delta, "property test");
                } catch (e) {
                  got = codeOf(e);
                }
                expect(`adjust: ${got}`).toBe(`adjust: ${fits ? "ok" : "conflict"}`);
                if (got === "conflict") stats.adjustRefused++;
                break;
              }
              case "refund": {
                const order = orders[o.order % Math.max(1, orders.length)];
                if (!order) break;
                const left = order.amount - order.refunded;
                const amount = o.part ? left / 2n : left;
                const a = (await t.ctx.accounts.getAccount(ids[order.acct]!))!;
                let expected = "ok";
                if (!order.credited || left === 0n) expected = "conflict";
                else if (amount <= 0n) expected = "validation_error";
                else if (a.balance_micro - amount < a.held_micro) expected = "conflict";
                let got = "ok";
                try {
                  await t.ctx.payments.refund(order.id, o.part ? amount : null, "property test");
                } catch (e) {
                  got = codeOf(e);
                }
                expect(`refund: ${got}`).toBe(`refund: ${expected}`);
                if (got === "ok") {
                  stats.refunds++;
                  order.refunded += amount;
                }
                break;
              }
              case "tick":
                t.clock.now += o.minutes * 60;
                break;
              case "sweep":
                await t.ctx.payments.expireDue();
                break;
            }
            await check(JSON.stringify(o));
            seen.set(o.t, (seen.get(o.t) ?? 0) + 1);
          }
        } finally {
          t.close();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(steps).toBeGreaterThan(RUNS * 5);
    // The mix really exercised money in: credits from both providers and from codes, refunds,
    // throttled redeems and refused adjustments (a generator that stopped producing them would
    // leave the invariants above checked on nothing).
    if (process.env.FC_VERBOSE) console.log(Object.fromEntries(seen), stats);
    for (const [name, n] of Object.entries(stats)) expect(`${name}: ${n > 0}`).toBe(`${name}: true`);
  }, 240_000);
});

/** Delivers one kind of notification about an order, through the real webhook routes. */
async function notify(
  t: Awaited<ReturnType<typeof paymentsApp>>,
  order: ModelOrder,
  kind: Notice,
  all: ModelOrder[],
): Promise<void> {
  const statusOf = async () => (await t.ctx.payments.orders.get(order.id))!.status;
  if (order.acct === 0) {
    const session = t.stripe.sessions.get(order.ref)!;
    switch (kind) {
      case "pay": {
        if (order.final) return;
        const sent = await t.stripe.pay(session.id);
        expect(sent.response.status).toBe(200);
        order.paid = true;
        order.sent = sent.body;
        return;
      }
      case "replay": {
        if (!order.sent) return;
        expect((await t.stripe.send(order.sent)).status).toBe(200);
        return;
      }
      case "burst": {
        // Eight identical deliveries at once (Stripe retries overlapping): one credit at most.
        if (order.final) return;
        session.status = "complete";
        session.payment_status = "paid";
        const ev = t.stripe.event("checkout.session.completed", session);
        const answers = await Promise.all(Array.from({ length: 8 }, () => t.stripe.send(ev.body)));
        for (const a of answers) expect(a.status).toBe(200);
        order.paid = true;
        order.sent = ev.body;
        return;
      }
      case "tampered": {
        // Signed by us but about another amount, or another account: a mismatch, never a credit.
        const other = all.find((x) => x.acct === 0 && x.id !== order.id);
        const ev = t.stripe.event("checkout.session.completed", session, {
          status: "complete",
          payment_status: "paid",
          ...(other
            ? { metadata: { order_id: other.id, account_id: session.metadata.account_id! } }
            : { amount_total: session.amount_total + 1 }),
        });
        expect((await t.stripe.send(ev.body)).status).toBe(200);
        return;
      }
      case "forged": {
        const ev = t.stripe.event("checkout.session.completed", session, {
          status: "complete",
          payment_status: "paid",
        });
        expect(
          (await t.stripe.send(ev.body, { secret: "whsec_not_the_operators_secret_000000" })).status,
        ).toBe(400);
        return;
      }
      case "stale": {
        const ev = t.stripe.event("checkout.session.completed", session, {
          status: "complete",
          payment_status: "paid",
        });
        expect((await t.stripe.send(ev.body, { timestamp: t.clock.now - 301 })).status).toBe(400);
        return;
      }
      case "expire": {
        // Reordered: an expiry may arrive before or after the payment; after it, it changes nothing.
        const ev = t.stripe.event("checkout.session.expired", session, { status: "expired" });
        expect((await t.stripe.send(ev.body)).status).toBe(200);
        return;
      }
      case "foreign": {
        // A genuine, signed event about a session that is not ours.
        const ev = t.stripe.event("checkout.session.completed", {
          ...session,
          id: "cs_test_notours0000000000000000",
          client_reference_id: null,
          metadata: {},
          payment_status: "paid",
          status: "complete",
        });
        expect((await t.stripe.send(ev.body)).status).toBe(200);
        return;
      }
    }
  } else {
    switch (kind) {
      case "pay":
      case "burst": {
        if (order.final) return;
        if (kind === "pay") expect((await t.yoo.pay(order.ref)).status).toBe(200);
        else {
          t.yoo.set(order.ref, { status: "succeeded", paid: true });
          const answers = await Promise.all(Array.from({ length: 8 }, () => t.yoo.notify(order.ref)));
          for (const a of answers) expect(a.status).toBe(200);
        }
        order.paid = true;
        return;
      }
      case "replay":
        if (order.paid) expect((await t.yoo.notify(order.ref)).status).toBe(200);
        return;
      case "tampered":
      case "forged":
      case "stale": {
        // Unsigned notifications claiming whatever they like: only YooKassa's API is believed.
        const claim = {
          id: order.ref,
          status: "succeeded",
          paid: true,
          amount: { value: "999999.00", currency: "RUB" },
        };
        const res = await t.yoo.notify(order.ref, "payment.succeeded", claim);
        expect([200, 400]).toContain(res.status);
        return;
      }
      case "expire": {
        if (order.paid || order.credited) return;
        // YooKassa cancels an unpaid payment: the order is final and never credited.
        t.yoo.set(order.ref, { status: "canceled", paid: false });
        expect((await t.yoo.notify(order.ref, "payment.canceled")).status).toBe(200);
        expect(await statusOf()).toBe("canceled");
        order.final = true;
        return;
      }
      case "foreign": {
        const res = await t.yoo.notify("2f000000-000f-5000-8000-000000000000", "payment.succeeded", {
          id: "2f000000-000f-5000-8000-000000000000",
          status: "succeeded",
          paid: true,
          metadata: {},
        });
        expect(res.status).toBe(200);
        return;
      }
    }
  }
}
