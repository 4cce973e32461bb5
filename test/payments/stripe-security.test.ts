// Stripe notifications that must credit nothing: replayed, duplicated (eight at once), forged,
// signed too long ago, mismatched (amount, currency, account, order, session), for an unknown order;
// a late but genuine payment of an expired order is credited once. Provider failures are 502.
import { afterEach, describe, expect, test } from "bun:test";
import { STRIPE_WEBHOOK_SECRET } from "../helpers/stripe-mock.ts";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

async function started() {
  t = await paymentsApp();
  await t.person("owner@example.com");
  const { b, res } = await t.checkout("owner@example.com", { preset: "10.00", provider: "stripe" });
  expect(res.status).toBe(303);
  const session = [...t.stripe.sessions.values()][0]!;
  const order = (await t.ctx.payments.orders.byProviderRef("stripe", session.id))!;
  return { b, session, order };
}

describe("replays and duplicates", () => {
  test("the same event again, and a second event for the same session, credit nothing", async () => {
    const { session, order } = await started();
    const first = await t.stripe.pay(session.id);
    expect(first.response.status).toBe(200);
    // Stripe retries the same event (same id, new signature): 200 so it stops, nothing credited.
    const again = await t.stripe.send(first.body);
    expect(again.status).toBe(200);
    const other = t.stripe.event("checkout.session.async_payment_succeeded", {
      ...session,
      payment_status: "paid",
    });
    expect((await t.stripe.send(other.body)).status).toBe(200);
    expect(await t.balance(t.account.id)).toBe(10_000_000n);
    expect((await t.topups(t.account.id)).n).toBe(1n);
    expect(await t.outcomes(order.id)).toEqual(["credited", "duplicate", "duplicate"]);
  });

  test("eight identical notifications at once credit exactly once", async () => {
    const { session, order } = await started();
    const ev = t.stripe.event("checkout.session.completed", {
      ...session,
      status: "complete",
      payment_status: "paid",
    });
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.stripe.send(ev.body)));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await t.balance(t.account.id)).toBe(10_000_000n);
    expect(await t.topups(t.account.id)).toEqual({ n: 1n, s: 10_000_000n });
    const outcomes = await t.outcomes(order.id);
    expect(outcomes.filter((o) => o === "credited")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "duplicate")).toHaveLength(7);
  });
});

describe("forged and stale", () => {
  test("a wrong secret, a tampered body or no signature: 400, nothing credited, logged forged", async () => {
    const { session } = await started();
    const ev = t.stripe.event("checkout.session.completed", { ...session, payment_status: "paid" });
    const cases = [
      await t.stripe.send(ev.body, { secret: "whsec_not_the_right_one" }),
      await t.stripe.send(ev.body, { header: null }),
      await t.stripe.send(ev.body, { header: "t=1,v1=deadbeef" }),
      await t.stripe.send(ev.body, { header: "garbage" }),
      await t.stripe.send("not json", { header: "t=1,v1=00" }),
    ];
    for (const r of cases) {
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: { code: string; param?: string } };
      expect(body.error.code).toBe("validation_error");
    }
    // A body changed after signing: the signature is over the original bytes.
    const { Stripe } = await import("stripe");
    const header = await Stripe.webhooks.generateTestHeaderStringAsync({
      payload: ev.body,
      secret: STRIPE_WEBHOOK_SECRET,
    });
    const tampered = ev.body.replace('"amount_total":1000', '"amount_total":100000');
    expect((await t.stripe.send(tampered, { header })).status).toBe(400);
    expect(await t.balance(t.account.id)).toBe(0n);
    expect(await t.outcomes()).toEqual(Array(6).fill("forged"));
    expect(
      (await t.ctx.payments.orders.get((await t.ctx.payments.orders.list({ limit: 1 }))[0]!.id))!.status,
    ).toBe("pending");
  });

  test("a signature older than 5 minutes is refused (400, logged expired); 299 s is still fine", async () => {
    const { session } = await started();
    const ev = t.stripe.event("checkout.session.completed", { ...session, payment_status: "paid" });
    const old = await t.stripe.send(ev.body, { timestamp: t.clock.now - 301 });
    expect(old.status).toBe(400);
    expect(await t.balance(t.account.id)).toBe(0n);
    expect(await t.outcomes()).toEqual(["expired"]);
    const recent = await t.stripe.send(ev.body, { timestamp: t.clock.now - 299 });
    expect(recent.status).toBe(200);
    expect(await t.balance(t.account.id)).toBe(10_000_000n);
  });
});

describe("mismatches", () => {
  const cases: [string, Record<string, unknown>][] = [
    ["amount", { amount_total: 999 }],
    ["currency", { currency: "eur" }],
    ["account", { metadata: { order_id: "", account_id: "acct_someoneelse000" } }],
    ["order id", { client_reference_id: "ord_00000000000000000000" }],
    ["session", { id: "cs_test_another_session" }],
  ];
  for (const [what, changes] of cases) {
    test(`a signed event with another ${what} credits nothing (200, logged)`, async () => {
      const { session, order } = await started();
      const fixed =
        what === "account"
          ? { metadata: { order_id: order.id, account_id: "acct_someoneelse000" } }
          : changes;
      const ev = t.stripe.event("checkout.session.completed", { ...session, payment_status: "paid" }, fixed);
      const r = await t.stripe.send(ev.body);
      expect(r.status).toBe(200);
      expect(await t.balance(t.account.id)).toBe(0n);
      expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("pending");
      expect(await t.outcomes()).toEqual(["mismatch"]);
    });
  }

  test("an event for a session no order knows: unknown_order, 200", async () => {
    await started();
    const ev = t.stripe.event("checkout.session.completed", {
      id: "cs_test_unknown",
      object: "checkout.session",
      mode: "payment",
      status: "complete",
      payment_status: "paid",
      amount_total: 1000,
      currency: "usd",
      client_reference_id: null,
      metadata: {},
      customer_email: null,
      success_url: "",
      cancel_url: "",
      expires_at: 0,
      url: "",
    });
    expect((await t.stripe.send(ev.body)).status).toBe(200);
    expect(await t.outcomes()).toEqual(["unknown_order"]);
    expect(await t.balance(t.account.id)).toBe(0n);
  });
});

describe("expiry", () => {
  test("the sweep expires open orders; a genuine payment that arrives later is still credited once", async () => {
    const { order, session } = await started();
    t.clock.now += 3600;
    expect(await t.ctx.payments.expireDue()).toBe(0);
    t.clock.now += 24 * 3600;
    expect(await t.ctx.payments.expireDue()).toBe(1);
    expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("expired");
    const sent = await t.stripe.pay(session.id);
    expect(sent.response.status).toBe(200);
    expect(await t.balance(t.account.id)).toBe(10_000_000n);
    expect((await t.stripe.send(sent.body)).status).toBe(200);
    expect((await t.topups(t.account.id)).n).toBe(1n);
    expect(await t.outcomes(order.id)).toEqual(["credited_late", "duplicate"]);
    expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("paid");
  });
});

describe("notification log retention", () => {
  test("notifications naming no order of ours are forgotten after 30 days; an order's are kept", async () => {
    const { order, session } = await started();
    const forged = t.stripe.event("checkout.session.completed", session);
    expect((await t.stripe.send(forged.body, { secret: "whsec_not_the_right_one" })).status).toBe(400);
    await t.stripe.pay(session.id);
    expect(await t.outcomes()).toEqual(["forged", "credited"]);
    t.clock.now += 29 * 86_400;
    await t.ctx.payments.expireDue();
    expect(await t.outcomes()).toEqual(["forged", "credited"]);
    t.clock.now += 2 * 86_400;
    await t.ctx.payments.expireDue();
    expect(await t.outcomes()).toEqual(["credited"]);
    expect(await t.outcomes(order.id)).toEqual(["credited"]);
  });
});

describe("provider failures", () => {
  test("Stripe answering 500, timing out, or sending a checkout URL elsewhere: 502, order failed, no redirect", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const b = await t.signedIn("owner@example.com");
    await b.page("/console/billing");
    for (const setup of [
      () => {
        t.stripe.failNext = 500;
      },
      () => {
        t.stripe.failNext = "hang";
      },
      () => {
        t.stripe.urlOverride = "https://evil.example/pay";
      },
    ]) {
      setup();
      const started = Date.now();
      const r = await b.post("/console/billing/checkout", { preset: "10.00", provider: "stripe" });
      expect(r.status).toBe(502);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).toContain("nothing was charged");
      expect(Date.now() - started).toBeLessThan(15_000);
    }
    const orders = await t.ctx.payments.orders.list({ limit: 10 });
    expect(orders.map((o) => o.status)).toEqual(["failed", "failed", "failed"]);
    expect(orders.every((o) => o.failure !== null)).toBe(true);
  });

  test("payments not enabled: the webhook route is 404", async () => {
    t = await paymentsApp();
    t.ctx.live = { ...t.ctx.live, payments: { ...t.ctx.live.payments, stripe: null } };
    const r = await t.app.handle(
      new Request("http://localhost/payments/stripe/webhook", { method: "POST", body: "{}" }),
    );
    expect(r.status).toBe(404);
  });
});
