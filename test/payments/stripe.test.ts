// Stripe Checkout against the local mock: the order is written before the redirect, the signed
// webhook credits it once (TOPUP naming the order), the return page and receipts show it.
import { afterEach, describe, expect, test } from "bun:test";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

describe("Stripe Checkout", () => {
  test("checkout writes the order, then 303 to the provider's page; the webhook credits once", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const { b, res } = await t.checkout("owner@example.com", {
      preset: "25.00",
      amount: "",
      provider: "stripe",
    });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location.startsWith(`${t.stripe.url}/pay/cs_test_`)).toBe(true);

    const [order] = await t.ctx.payments.orders.list({ accountId: t.account.id, limit: 10 });
    expect(order!.status).toBe("pending");
    expect(order!.amount_micro).toBe(25_000_000n);
    expect(order!.currency).toBe("USD");
    const session = t.stripe.sessions.get(order!.provider_ref!)!;
    expect(session.amount_total).toBe(2500);
    expect(session.currency).toBe("usd");
    expect(session.client_reference_id).toBe(order!.id);
    expect(session.metadata).toEqual({ order_id: order!.id, account_id: t.account.id });
    expect(session.success_url).toBe(`http://gengate.test/console/billing/return?order=${order!.id}`);
    expect(session.customer_email).toBe("owner@example.com");
    // The order id is Stripe's idempotency key: a retried create can never make a second session.
    expect(t.stripe.requests[0]!.headers.get("idempotency-key")).toBe(order!.id);

    // Before Stripe confirms, the return page says so and nothing is credited.
    const waiting = await b.page(`/console/billing/return?order=${order!.id}`);
    expect(waiting.status).toBe(200);
    expect(waiting.text).toContain("Waiting for Stripe to confirm");
    expect(await t.balance(t.account.id)).toBe(0n);

    const sent = await t.stripe.pay(session.id);
    expect(sent.response.status).toBe(200);
    expect(await sent.response.json()).toEqual({ received: true });
    expect(await t.balance(t.account.id)).toBe(25_000_000n);
    const paid = (await t.ctx.payments.orders.get(order!.id))!;
    expect(paid.status).toBe("paid");
    expect(paid.paid_at).not.toBeNull();
    const entry = await t.ctx.sql.all<{ source: string; ref_id: string; amount_micro: bigint }>(
      "SELECT source, ref_id, amount_micro FROM ledger_entries WHERE account_id = ? AND kind = 'topup'",
      [t.account.id],
    );
    expect(entry).toEqual([{ source: "TOPUP", ref_id: order!.id, amount_micro: 25_000_000n }]);
    expect(await t.outcomes(order!.id)).toEqual(["credited"]);

    // The return page now says paid; the billing page lists the payment with its receipt.
    const done = await b.page(`/console/billing/return?order=${order!.id}`);
    expect(done.text).toContain("was added to your balance");
    const billing = await b.page("/console/billing");
    expect(billing.text).toContain(`href="/console/billing/receipts/${order!.id}"`);
    const receipt = await b.page(`/console/billing/receipts/${order!.id}`);
    expect(receipt.status).toBe(200);
    expect(receipt.text).toContain("Receipt");
    expect(receipt.text).toContain(session.id);
    expect(receipt.text).toContain('<data value="25000000">25.00 USD</data>');
    expect(receipt.text).toContain('class="no-print"');
  });

  test("a custom amount replaces the preset; bounds and decimals are checked before any order", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const ok = await t.checkout("owner@example.com", {
      preset: "10.00",
      amount: "12.34",
      provider: "stripe",
    });
    expect(ok.res.status).toBe(303);
    expect([...t.stripe.sessions.values()][0]!.amount_total).toBe(1234);
    for (const [amount, message] of [
      ["4.99", "from 5.00 to 500.00 USD"],
      ["500.01", "from 5.00 to 500.00 USD"],
      ["10.001", "at most 2 decimal places"],
      ["ten", "Choose an amount"],
      ["-5", "Choose an amount"],
    ] as const) {
      const r = await ok.b.post("/console/billing/checkout", { preset: "", amount, provider: "stripe" });
      expect(r.status, amount).toBe(400);
      expect(await r.text(), amount).toContain(message);
    }
    const wrongProvider = await ok.b.post("/console/billing/checkout", {
      amount: "10",
      provider: "yookassa",
    });
    expect(wrongProvider.status).toBe(400);
    expect(await wrongProvider.text()).toContain("YooKassa takes RUB");
    expect(await t.ctx.payments.orders.list({ limit: 100 })).toHaveLength(1);
  });

  test("async payment: completed but unpaid is not credited; async_payment_succeeded then credits", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    await t.checkout("owner@example.com", { preset: "10.00", provider: "stripe" });
    const session = [...t.stripe.sessions.values()][0]!;
    const unpaid = t.stripe.event("checkout.session.completed", session, { status: "complete" });
    expect((await t.stripe.send(unpaid.body)).status).toBe(200);
    expect(await t.balance(t.account.id)).toBe(0n);
    const ok = t.stripe.event("checkout.session.async_payment_succeeded", session, {
      payment_status: "paid",
    });
    expect((await t.stripe.send(ok.body)).status).toBe(200);
    expect(await t.balance(t.account.id)).toBe(10_000_000n);
    expect(await t.outcomes()).toEqual(["not_paid", "credited"]);
  });

  test("checkout.session.expired closes the order; other events are ignored", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    await t.checkout("owner@example.com", { preset: "10.00", provider: "stripe" });
    const session = [...t.stripe.sessions.values()][0]!;
    const other = t.stripe.event("payment_intent.created", session);
    expect((await t.stripe.send(other.body)).status).toBe(200);
    const expired = t.stripe.event("checkout.session.expired", session, { status: "expired" });
    expect((await t.stripe.send(expired.body)).status).toBe(200);
    const order = (await t.ctx.payments.orders.byProviderRef("stripe", session.id))!;
    expect(order.status).toBe("expired");
    expect(await t.outcomes()).toEqual(["ignored", "closed"]);
  });
});
