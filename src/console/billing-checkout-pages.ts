/**
 * Paying on the billing page (docs/billing.md, "Payments"): the checkout section (preset and
 * custom amounts, one checkout button per enabled provider of the account's currency), the
 * checkout POST (the order is written, then 303 to the provider's page), the return page (shows
 * the order as it is: it never credits anything), receipts (printable) and the account's orders.
 *
 * Who: owners (docs/console.md: billing is an owner's). Members see that an owner tops up; the
 * checkout, return and receipt routes answer them 403. Another account's order is 404.
 */
import { Elysia } from "elysia";
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html } from "../lib/html.ts";
import { parseDecimalToMicro } from "../lib/money.ts";
import { ownedOrder } from "../payments/order-search.ts";
import { type CheckoutState, checkoutSection, returnMessage } from "./billing-checkout-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
  requireOwner,
} from "./kit.ts";

async function checkoutPage(
  c: PageContext,
  kit: ConsoleKit,
  state: CheckoutState,
  status: number,
): Promise<Response> {
  const s = requireAccount(c.session);
  return htmlResponse(
    await c.layout({
      title: "Top up",
      active: "billing",
      body: html`<p><a href="/console/billing">← Billing</a></p>
<h1>Top up</h1>
${await checkoutSection(kit, s, state)}`,
    }),
    status,
  );
}

async function returnPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireOwner(c.session);
  const order = await ownedOrder(kit.ctx.payments, s.accountId, c.url.searchParams.get("order"));
  const message = returnMessage(order, c.url.searchParams.get("canceled") === "1");
  return htmlResponse(
    await c.layout({
      title: "Payment",
      active: "billing",
      body: html`<h1>Payment</h1>
<p class="mono">${order.id}</p>
${message}`,
    }),
  );
}

async function startCheckout(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireOwner(c.session);
  const custom = field(c.form, "amount").trim().slice(0, 40);
  const preset = field(c.form, "preset").trim().slice(0, 40);
  const state = { amount: custom, preset };
  try {
    const text = custom || preset;
    const micro = text ? parseDecimalToMicro(text.replace(/[\s,_]/g, "")) : null;
    if (micro === null)
      throw new DomainError(
        "validation_error",
        "Choose an amount, or write one as a decimal such as 25 or 12.50.",
        {
          param: "amount",
        },
      );
    const { url } = await kit.ctx.payments.startCheckout({
      accountId: s.accountId,
      personId: s.personId,
      email: s.email,
      provider: field(c.form, "provider"),
      amountMicro: micro,
    });
    // The order is stored; the provider's page (on its configured origin) takes it from here.
    return redirect(url);
  } catch (err) {
    if (!(err instanceof DomainError) || err.code === "not_found" || err.code === "forbidden") throw err;
    const res = await checkoutPage(c, kit, { ...state, error: err.message }, httpStatus(err.code));
    if (err.retryAfterSeconds) res.headers.set("retry-after", String(err.retryAfterSeconds));
    return res;
  }
}

export function billingCheckoutPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/billing/checkout",
      kit.action((c) => startCheckout(c, kit)),
    )
    .get(
      "/console/billing/return",
      kit.page((c) => returnPage(c, kit)),
    );
}
