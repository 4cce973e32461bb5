// Refunds of paid orders (one service for the admin API and the CLI): a negative ADMIN adjustment
// naming the order plus the order's refunded amount, in one transaction; never above what is left,
// never below what open jobs hold (409, nothing changed). And the admin orders API.
import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN } from "../helpers/context.ts";
import { paymentsApp } from "./helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

async function paidOrder(amount = "25") {
  t = await paymentsApp();
  await t.person("owner@example.com");
  await t.checkout("owner@example.com", { amount, provider: "stripe" });
  const session = [...t.stripe.sessions.values()][0]!;
  expect((await t.stripe.pay(session.id)).response.status).toBe(200);
  return (await t.ctx.payments.orders.byProviderRef("stripe", session.id))!;
}

const admin = (path: string, init: RequestInit = {}) =>
  t.app.handle(
    new Request(`http://localhost${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        "content-type": "application/json",
        ...init.headers,
      },
    }),
  );

describe("refund service", () => {
  test("partial, then the rest; never more than paid", async () => {
    const order = await paidOrder();
    const after = await t.ctx.payments.refund(order.id, 10_000_000n, "customer asked");
    expect(after.refunded_micro).toBe(10_000_000n);
    expect(await t.balance(t.account.id)).toBe(15_000_000n);
    const entry = await t.ctx.sql.all<{
      kind: string;
      source: string;
      balance_delta_micro: bigint;
      ref_id: string;
      reason: string;
    }>(
      "SELECT kind, source, balance_delta_micro, ref_id, reason FROM ledger_entries WHERE account_id = ? AND kind = 'adjustment'",
      [t.account.id],
    );
    expect(entry).toEqual([
      {
        kind: "adjustment",
        source: "ADMIN",
        balance_delta_micro: -10_000_000n,
        ref_id: order.id,
        reason: `refund of ${order.id}: customer asked`,
      },
    ]);
    await expect(
      (async () => await t.ctx.payments.refund(order.id, 15_000_001n, "too much"))(),
    ).rejects.toThrow(/At most 15.00 USD/);
    expect((await t.ctx.payments.refund(order.id, null, "the rest")).refunded_micro).toBe(25_000_000n);
    expect(await t.balance(t.account.id)).toBe(0n);
    await expect((async () => await t.ctx.payments.refund(order.id, null, "again"))()).rejects.toThrow(
      /refunded in full/,
    );
  });

  test("never below what open jobs hold: 409 and nothing changes", async () => {
    const order = await paidOrder();
    await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: null,
      modelId: null,
      requestId: null,
      source: "API",
      quotedUsdMicro: 20_000_000n,
    });
    let err: unknown;
    try {
      await t.ctx.payments.refund(order.id, 10_000_000n, "would dip into the hold");
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).toBe("conflict");
    expect((await t.ctx.payments.orders.get(order.id))!.refunded_micro).toBe(0n);
    expect(await t.balance(t.account.id)).toBe(25_000_000n);
    expect((await t.ctx.payments.refund(order.id, 5_000_000n, "fits")).refunded_micro).toBe(5_000_000n);
  });

  test("an unpaid order, an unknown one, no reason", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    await t.checkout("owner@example.com", { amount: "10", provider: "stripe" });
    const [open] = await t.ctx.payments.orders.list({ limit: 1 });
    await expect((async () => await t.ctx.payments.refund(open!.id, null, "x"))()).rejects.toThrow(
      /Only a paid order/,
    );
    await expect(
      (async () => await t.ctx.payments.refund("ord_000000000000000000000", null, "x"))(),
    ).rejects.toThrow(/No order/);
    await expect((async () => await t.ctx.payments.refund(open!.id, null, "  "))()).rejects.toThrow(
      /needs a reason/,
    );
  });
});

describe("admin API", () => {
  test("list with filters, one order with its notifications, refund with 409s", async () => {
    const order = await paidOrder();
    await t.checkout("owner@example.com", { amount: "7", provider: "stripe" });
    const all = (await (await admin("/admin/v1/orders")).json()) as {
      data: { id: string; status: string }[];
    };
    expect(all.data.map((o) => o.status)).toEqual(["pending", "paid"]);
    const paid = (await (await admin("/admin/v1/orders?status=paid&provider=stripe")).json()) as {
      data: { id: string; amount_micro: string; provider_ref: string }[];
    };
    expect(paid.data).toHaveLength(1);
    expect(paid.data[0]!.amount_micro).toBe("25000000");
    const page = (await (await admin("/admin/v1/orders?limit=1")).json()) as { next_cursor: string };
    const second = (await (await admin(`/admin/v1/orders?limit=1&cursor=${page.next_cursor}`)).json()) as {
      data: { id: string }[];
    };
    expect(second.data[0]!.id).toBe(order.id);
    for (const bad of ["status=nope", "provider=paypal", "account_id=x", "limit=0", "cursor=zzz"]) {
      expect((await admin(`/admin/v1/orders?${bad}`)).status, bad).toBe(400);
    }
    const one = (await (await admin(`/admin/v1/orders/${order.id}`)).json()) as {
      notifications: { outcome: string }[];
    };
    expect(one.notifications.map((n) => n.outcome)).toEqual(["credited"]);
    expect((await admin("/admin/v1/orders/ord_000000000000000000000")).status).toBe(404);

    const refund = (body: unknown) =>
      admin(`/admin/v1/orders/${order.id}/refund`, { method: "POST", body: JSON.stringify(body) });
    const r = await refund({ amount: "5", reason: "goodwill" });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { refunded_micro: string }).refunded_micro).toBe("5000000");
    expect((await refund({ amount: "20.01", reason: "too much" })).status).toBe(409);
    expect((await refund({ amount: "1" })).status).toBe(400);
    expect((await refund({ amount: "-1", reason: "x" })).status).toBe(400);
    expect(
      (
        await t.app.handle(
          new Request(`http://localhost/admin/v1/orders/${order.id}/refund`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ reason: "no token" }),
          }),
        )
      ).status,
    ).toBe(401);
    expect(await t.balance(t.account.id)).toBe(20_000_000n);
  });
});
