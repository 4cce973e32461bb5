// YooKassa against the local mock: the payment is created with the order id as Idempotence-Key and
// Basic auth; a notification is never believed: the payment is fetched from the API and only a
// succeeded, paid payment of the order's amount, currency, order and account credits, once.
import { afterEach, describe, expect, test } from "bun:test";
import { YOOKASSA_SECRET_KEY, YOOKASSA_SHOP_ID } from "../helpers/yookassa-mock.ts";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

async function started(amount = "1500") {
  t = await paymentsApp();
  const accountId = await t.rubOwner("rub@example.com");
  const { b, res } = await t.checkout("rub@example.com", { preset: "", amount, provider: "yookassa" });
  expect(res.status).toBe(303);
  const payment = [...t.yoo.payments.values()][0]!;
  const order = (await t.ctx.payments.orders.byProviderRef("yookassa", payment.id))!;
  return { b, res, accountId, payment, order };
}

describe("YooKassa", () => {
  test("checkout: order first, Idempotence-Key = order id, Basic auth, redirect to the payment page", async () => {
    const { res, accountId, payment, order } = await started();
    expect(res.headers.get("location")).toBe(`${t.yoo.url}/pay/${payment.id}`);
    const create = t.yoo.requests[0]!;
    expect(create.method).toBe("POST");
    expect(create.headers.get("idempotence-key")).toBe(order.id);
    expect(create.headers.get("authorization")).toBe(
      `Basic ${Buffer.from(`${YOOKASSA_SHOP_ID}:${YOOKASSA_SECRET_KEY}`).toString("base64")}`,
    );
    expect(payment.amount).toEqual({ value: "1500.00", currency: "RUB" });
    expect(payment.metadata).toEqual({ order_id: order.id, account_id: accountId });
    expect(payment.confirmation.return_url).toBe(
      `http://gengate.test/console/billing/return?order=${order.id}`,
    );
    expect(order.status).toBe("pending");
    expect(order.currency).toBe("RUB");
  });

  test("a notification is checked against the API, then credits once; replays and 8 at once do not", async () => {
    const { accountId, payment, order } = await started();
    const first = await t.yoo.pay(payment.id);
    expect(first.status).toBe(200);
    expect(await t.balance(accountId)).toBe(1_500_000_000n);
    // The credit came after a GET of the payment from the API.
    expect(t.yoo.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v3/payments",
      `GET /v3/payments/${payment.id}`,
    ]);
    const again = await Promise.all(Array.from({ length: 8 }, () => t.yoo.notify(payment.id)));
    expect(again.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await t.balance(accountId)).toBe(1_500_000_000n);
    expect(await t.topups(accountId)).toEqual({ n: 1n, s: 1_500_000_000n });
    const outcomes = await t.outcomes(order.id);
    expect(outcomes[0]).toBe("credited");
    expect(outcomes.slice(1)).toEqual(Array(8).fill("duplicate"));
  });

  test("eight identical first notifications at once credit exactly once", async () => {
    const { accountId, payment } = await started();
    t.yoo.set(payment.id, { status: "succeeded", paid: true });
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.yoo.notify(payment.id)));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await t.topups(accountId)).toEqual({ n: 1n, s: 1_500_000_000n });
  });

  test("a forged 'succeeded' for a payment the API says is pending credits nothing", async () => {
    const { accountId, payment, order } = await started();
    const forged = await t.yoo.notify(payment.id, "payment.succeeded", {
      ...payment,
      status: "succeeded",
      paid: true,
    });
    expect(forged.status).toBe(200);
    expect(await t.balance(accountId)).toBe(0n);
    expect(await t.outcomes(order.id)).toEqual(["not_paid"]);
  });

  test("a notification for a payment YooKassa does not know: 400 forged; one naming no order: no API call", async () => {
    const { accountId, order } = await started();
    // Claims our order in its metadata, but the payment id is made up: the API answers 404.
    const madeUp = "2d3f0000-000f-5000-8000-1a2b3c4d5e6f";
    const r = await t.yoo.notify(madeUp, "payment.succeeded", {
      id: madeUp,
      status: "succeeded",
      paid: true,
      amount: { value: "1500.00", currency: "RUB" },
      metadata: { order_id: order.id, account_id: accountId },
    });
    expect(r.status).toBe(400);
    expect(await t.outcomes(order.id)).toEqual(["forged"]);
    const before = t.yoo.requests.length;
    const stranger = await t.yoo.notify("2d3f0000-000f-5000-8000-aaaaaaaaaaaa", "payment.succeeded", {
      id: "2d3f0000-000f-5000-8000-aaaaaaaaaaaa",
    });
    expect(stranger.status).toBe(200);
    expect(t.yoo.requests.length).toBe(before);
    const malformed = await t.app.handle(
      new Request("http://localhost/payments/yookassa/webhook", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          type: "notification",
          event: "payment.succeeded",
          object: { id: "../v3/me" },
        }),
      }),
    );
    expect(malformed.status).toBe(400);
    expect(await t.balance(accountId)).toBe(0n);
    expect((await t.outcomes()).slice(1)).toEqual(["unknown_order", "forged"]);
    // Hostile bodies: not JSON, nested 100,000 deep, a forbidden key: 400 with the contract's body.
    for (const body of ["{not json", "[".repeat(100_000), '{"__proto__": {"x": 1}}']) {
      const res = await t.app.handle(
        new Request("http://localhost/payments/yookassa/webhook", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        }),
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("validation_error");
    }
    expect(await t.balance(accountId)).toBe(0n);
  });

  const mismatches: [string, Record<string, unknown>][] = [
    ["amount", { amount: { value: "1499.99", currency: "RUB" } }],
    ["currency", { amount: { value: "1500.00", currency: "USD" } }],
    ["order id", { metadata: { order_id: "ord_00000000000000000000", account_id: "" } }],
    ["account", { metadata: { order_id: "", account_id: "acct_someoneelse000" } }],
  ];
  for (const [what, changes] of mismatches) {
    test(`the API reports another ${what}: nothing credited (200, logged mismatch)`, async () => {
      const { accountId, payment, order } = await started();
      const fixed =
        what === "account"
          ? { metadata: { order_id: order.id, account_id: "acct_someoneelse000" } }
          : what === "order id"
            ? { metadata: { order_id: "ord_00000000000000000000", account_id: accountId } }
            : changes;
      t.yoo.set(payment.id, { status: "succeeded", paid: true, ...fixed });
      const r = await t.yoo.notify(payment.id);
      expect(r.status).toBe(200);
      expect(await t.balance(accountId)).toBe(0n);
      expect(await t.outcomes(order.id)).toEqual(["mismatch"]);
      expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("pending");
    });
  }

  test("the API down or slow: 502 (YooKassa retries), logged; the retry then credits", async () => {
    const { accountId, payment, order } = await started();
    t.yoo.set(payment.id, { status: "succeeded", paid: true });
    t.yoo.failNext = 500;
    const down = await t.yoo.notify(payment.id);
    expect(down.status).toBe(502);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe("payment_provider_error");
    t.yoo.failNext = "hang";
    const slow = await t.yoo.notify(payment.id);
    expect(slow.status).toBe(502);
    expect(await t.balance(accountId)).toBe(0n);
    expect((await t.yoo.notify(payment.id)).status).toBe(200);
    expect(await t.balance(accountId)).toBe(1_500_000_000n);
    expect(await t.outcomes(order.id)).toEqual(["verify_failed", "verify_failed", "credited"]);
  });

  test("payment.canceled (confirmed by the API) closes the order", async () => {
    const { payment, order } = await started();
    t.yoo.set(payment.id, { status: "canceled" });
    expect((await t.yoo.notify(payment.id, "payment.canceled")).status).toBe(200);
    expect((await t.ctx.payments.orders.get(order.id))!.status).toBe("canceled");
    expect(await t.outcomes(order.id)).toEqual(["closed"]);
  });

  test("creating the payment fails: 502, the order is failed, nothing to pay", async () => {
    t = await paymentsApp();
    await t.rubOwner("rub@example.com");
    t.yoo.failNext = 503;
    const { res } = await t.checkout("rub@example.com", { amount: "1500", provider: "yookassa" });
    expect(res.status).toBe(502);
    expect((await t.ctx.payments.orders.list({ limit: 5 })).map((o) => o.status)).toEqual(["failed"]);
  });
});
