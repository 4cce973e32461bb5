// The checkout form and the payment pages: CSRF and Origin on the checkout, owners only, another
// account's orders are 404, the CSP lets the billing form reach exactly the enabled providers'
// checkout origins, and the operator's orders page is for operators.
import { afterEach, describe, expect, test } from "bun:test";
import { CONSOLE_CSP } from "../../src/console/security.ts";
import { paymentsApp } from "../payments/helpers.ts";

let t: Awaited<ReturnType<typeof paymentsApp>>;
afterEach(() => t?.close());

async function paidFor(email: string) {
  await t.checkout(email, { amount: "10", provider: "stripe" });
  const session = [...t.stripe.sessions.values()].at(-1)!;
  await t.stripe.pay(session.id);
  return (await t.ctx.payments.orders.byProviderRef("stripe", session.id))!;
}

describe("checkout form", () => {
  test("no CSRF token, a wrong one, another Origin or none: 403 and no order, no provider call", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const b = await t.signedIn("owner@example.com");
    await b.page("/console/billing");
    for (const options of [
      { csrf: null },
      { csrf: "wrong-token-wrong-token-wrong-token" },
      { origin: "https://evil.example" },
      { origin: null },
    ]) {
      const r = await b.post("/console/billing/checkout", { amount: "10", provider: "stripe" }, options);
      expect(r.status, JSON.stringify(options)).toBe(403);
      expect(r.headers.get("location")).toBeNull();
    }
    expect(await t.ctx.payments.orders.list({ limit: 10 })).toHaveLength(0);
    expect(t.stripe.requests).toHaveLength(0);
    const anon = t.browser();
    const r = await anon.post(
      "/console/billing/checkout",
      { amount: "10", provider: "stripe" },
      { csrf: null },
    );
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/console/login");
  });

  test("members see who tops up, and get 403 on checkout, return and receipts", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    await t.person("member@example.com", "member");
    const order = await paidFor("owner@example.com");
    const m = await t.signedIn("member@example.com");
    const page = await m.page("/console/billing");
    expect(page.text).toContain("Only an owner of this account can top it up here.");
    expect(page.text).not.toContain("Checkout with");
    expect((await m.post("/console/billing/checkout", { amount: "10", provider: "stripe" })).status).toBe(
      403,
    );
    expect((await m.get(`/console/billing/receipts/${order.id}`)).status).toBe(403);
    expect((await m.get(`/console/billing/return?order=${order.id}`)).status).toBe(403);
  });

  test("another account's receipt and return page are 404, as are unknown, malformed and unpaid ones", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const order = await paidFor("owner@example.com");
    await t.rubOwner("other@example.com");
    const other = await t.signedIn("other@example.com");
    expect((await other.get(`/console/billing/receipts/${order.id}`)).status).toBe(404);
    expect((await other.get(`/console/billing/return?order=${order.id}`)).status).toBe(404);
    const owner = await t.signedIn("owner@example.com");
    expect((await owner.get(`/console/billing/receipts/${order.id}`)).status).toBe(200);
    for (const path of [
      "/console/billing/receipts/ord_000000000000000000000",
      "/console/billing/receipts/ord_x",
      "/console/billing/receipts/%3Cscript%3E",
      "/console/billing/return?order=nope",
      "/console/billing/return",
    ]) {
      expect((await owner.get(path)).status, path).toBe(404);
    }
    await t.checkout("owner@example.com", { amount: "10", provider: "stripe" });
    const open = (await t.ctx.payments.orders.list({ status: "pending", limit: 1 }))[0]!;
    expect((await owner.get(`/console/billing/receipts/${open.id}`)).status).toBe(404);
  });

  test("the CSP's form-action names the enabled checkout origins only", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const b = await t.signedIn("owner@example.com");
    const page = await b.page("/console/billing");
    const csp = page.res.headers.get("content-security-policy")!;
    expect(csp).toContain(`form-action 'self' ${t.stripe.url} ${t.yoo.url}`);
    t.ctx.live = { ...t.ctx.live, payments: { ...t.ctx.live.payments, stripe: null, yookassa: null } };
    const off = await b.page("/console/billing");
    expect(off.res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(off.text).toContain("Card payments are not enabled");
    expect((await b.post("/console/billing/checkout", { amount: "10", provider: "stripe" })).status).toBe(
      400,
    );
  });

  test("the 'canceled' return shows nothing charged; text from the URL is never echoed", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    const { b } = await t.checkout("owner@example.com", { amount: "10", provider: "stripe" });
    const order = (await t.ctx.payments.orders.list({ limit: 1 }))[0]!;
    const page = await b.page(`/console/billing/return?order=${order.id}&canceled=1&x=%3Cscript%3E`);
    expect(page.text).toContain("nothing was charged");
    expect(page.text).not.toContain("<script>");
  });
});

describe("operator orders page", () => {
  test("operators see orders, filters and the notification log; others 403; bad filters 400", async () => {
    t = await paymentsApp();
    await t.person("owner@example.com");
    await t.person("op@example.com", "owner", true);
    const order = await paidFor("owner@example.com");
    const owner = await t.signedIn("owner@example.com");
    expect((await owner.get("/console/admin/orders")).status).toBe(403);
    expect((await owner.get(`/console/admin/orders/${order.id}`)).status).toBe(403);
    const op = await t.signedIn("op@example.com");
    const all = await op.page("/console/admin/orders");
    expect(all.status).toBe(200);
    expect(all.text).toContain(order.id);
    expect(all.text).toContain(order.provider_ref!);
    expect(all.text).toContain("credited");
    expect((await op.page("/console/admin/orders?status=failed")).text).not.toContain(
      `data-order="${order.id}"`,
    );
    expect((await op.page(`/console/admin/orders?find=${order.provider_ref}`)).text).toContain(
      `data-order="${order.id}"`,
    );
    expect((await op.page("/console/admin/orders?status=nope")).status).toBe(400);
    expect((await op.page("/console/admin/orders?account=x")).status).toBe(400);
    const one = await op.page(`/console/admin/orders/${order.id}`);
    expect(one.text).toContain("checkout.session.completed");
    expect((await op.get("/console/admin/orders/ord_000000000000000000000")).status).toBe(404);
  });
});
