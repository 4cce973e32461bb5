// Payments and the maximum balance (MAX_BALANCE_MICRO, docs/money.md "The maximum balance"): a paid
// notification whose credit would pass it was a 500 once the sum passed 2^63 - 1; now it is the
// ledger's 400 naming the limit, logged, with the order left open so that the provider's retry
// credits it once there is room. A checkout that could not be credited is refused before any order,
// and refunds (debits) are unaffected. Run on PostgreSQL by scripts/test-postgres.
import { afterEach, describe, expect, test } from "bun:test";
import { formatMicro, MAX_BALANCE_MICRO } from "../../src/lib/money.ts";
import { countRows } from "../helpers/backend.ts";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

const MAX = formatMicro(MAX_BALANCE_MICRO);
const RUB_1500 = 1_500_000_000n;

describe("payments and the maximum balance", () => {
  test("a paid notification past the limit: 400 naming it, logged, order still open; the retry credits once there is room", async () => {
    t = await paymentsApp();
    const { accountId, payment, order } = await t.rubPending("rub@example.com");
    // Meanwhile the balance grew to 1,000 RUB below the limit: the 1,500 RUB no longer fit.
    await t.ctx.ledger.topUp(accountId, MAX_BALANCE_MICRO - 1_000_000_000n, "almost full");
    const entries = await countRows(t.ctx.sql, "ledger_entries WHERE account_id = ?", [accountId]);

    const refused = await t.yoo.pay(payment.id);
    expect(refused.status).toBe(400);
    const e = ((await refused.json()) as { error: Record<string, string> }).error;
    expect(e).toMatchObject({
      code: "validation_error",
      param: "amount",
      max_balance_micro: MAX_BALANCE_MICRO.toString(),
    });
    expect(e.message).toContain(`maximum balance of ${MAX} RUB`);
    expect(await countRows(t.ctx.sql, "ledger_entries WHERE account_id = ?", [accountId])).toBe(entries);
    expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("pending");
    const log = await t.ctx.sql.all<{ outcome: string; detail: string }>(
      "SELECT outcome, detail FROM payment_notifications WHERE order_id = ?",
      [order.id],
    );
    expect(log.map((l) => l.outcome)).toEqual(["mismatch"]);
    expect(log[0]!.detail).toContain(`maximum balance of ${MAX} RUB`);

    // The operator makes room; YooKassa's next delivery of the notification credits it, once.
    await t.ctx.ledger.adjust(accountId, -500_000_000n, "make room");
    expect((await t.yoo.notify(payment.id)).status).toBe(200);
    expect(await t.balance(accountId)).toBe(MAX_BALANCE_MICRO);
    expect((await t.topups(accountId)).n).toBe(1n);
    expect(await t.outcomes(order.id)).toEqual(["mismatch", "credited"]);
  });

  test("a checkout whose amount could not be credited: 400 naming the limit, no order, no provider call", async () => {
    t = await paymentsApp();
    const accountId = await t.rubOwner("rub@example.com");
    await t.ctx.ledger.topUp(accountId, MAX_BALANCE_MICRO - 1_000_000_000n, "almost full");
    const { res } = await t.checkout("rub@example.com", { amount: "1500", provider: "yookassa" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`maximum balance of ${MAX} RUB`);
    expect(await countRows(t.ctx.sql, "orders")).toBe(0);
    expect(t.yoo.requests).toHaveLength(0);
    // What still fits is fine.
    expect((await t.checkout("rub@example.com", { amount: "1000", provider: "yookassa" })).res.status).toBe(
      303,
    );
  });

  test("a refund of an account at the limit is a debit: it works", async () => {
    t = await paymentsApp();
    const { accountId, payment, order } = await t.rubPending("rub@example.com");
    expect((await t.yoo.pay(payment.id)).status).toBe(200);
    await t.ctx.ledger.topUp(accountId, MAX_BALANCE_MICRO - RUB_1500, "to the limit");
    expect(await t.balance(accountId)).toBe(MAX_BALANCE_MICRO);
    const refunded = await t.ctx.payments.refund(order.id, null, "customer asked");
    expect(refunded.refunded_micro).toBe(RUB_1500);
    expect(await t.balance(accountId)).toBe(MAX_BALANCE_MICRO - RUB_1500);
  });
});
