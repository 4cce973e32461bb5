// YooKassa's notifications are unsigned, so gengate believes only the API's answer to
// GET /v3/payments/{payment_id}. That answer is the payment object of the id in the path ("Информация
// о платеже", https://yookassa.ru/developers/api#get_payment: "Запрос позволяет получить информацию о
// текущем состоянии платежа по его уникальному идентификатору"; its `id` field is that identifier).
// An answer about another payment (a proxy or cache in front of the API, a misrouted call) confirms
// nothing about the notified one: src/payments/yookassa.ts compares the ids.
import { afterEach, describe, expect, test } from "bun:test";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

describe("YooKassa: the API's answer must be about the notified payment", () => {
  test("GET /payments/<ours> answers another, succeeded payment: 400, logged forged, nothing credited", async () => {
    t = await paymentsApp();
    // Two RUB accounts, each with a pending order and its payment.
    const {
      accountId: first,
      payment: notified,
      order: notifiedOrder,
    } = await t.rubPending("first@example.com");
    const { accountId: second, payment: other, order: otherOrder } = await t.rubPending("second@example.com");
    expect(otherOrder.account_id).toBe(second);

    // The other payment has succeeded at YooKassa (its own notification has not arrived yet); the
    // API, asked about the notified payment, answers with that one.
    t.yoo.set(other.id, { status: "succeeded", paid: true });
    t.yoo.answerAs.set(notified.id, other.id);
    const res = await t.yoo.notify(notified.id);

    expect(res.status).toBe(400);
    expect(t.yoo.requests.at(-1)!.path).toBe(`/v3/payments/${notified.id}`);
    expect(await t.outcomes(notifiedOrder.id)).toEqual(["forged"]);
    // Nothing credited anywhere: not the notified order's account, not the answered payment's.
    expect(await t.outcomes(otherOrder.id)).toEqual([]);
    expect(await t.balance(first)).toBe(0n);
    expect(await t.balance(second)).toBe(0n);
    expect((await t.topups(second)).n).toBe(0n);
    expect((await t.ctx.payments.orders.get(notifiedOrder.id))!.status).toBe("pending");
    expect((await t.ctx.payments.orders.get(otherOrder.id))!.status).toBe("pending");

    // The other payment's own notification still credits its order, once.
    t.yoo.answerAs.clear();
    expect((await t.yoo.notify(other.id)).status).toBe(200);
    expect(await t.balance(second)).toBe(1_500_000_000n);
    expect(await t.balance(first)).toBe(0n);
  });
});
