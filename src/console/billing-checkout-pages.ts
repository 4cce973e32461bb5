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
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import { ORDER_ID, type OrderRow } from "../payments/orders.ts";
import { type PaymentCurrency, PROVIDER_LABEL } from "../payments/provider.ts";
import { formatMoney, formatTime } from "./format.ts";
import {
  type AccountSession,
  type ConsoleKit,
  field,
  formError,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
  requireOwner,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { money, tableBox } from "./money-view.ts";

const ORDERS_SHOWN = 20;

interface CheckoutState {
  preset?: string;
  amount?: string;
  error?: string | null;
}

const STATUS_TEXT: Record<OrderRow["status"], string> = {
  created: "not started",
  pending: "waiting for payment",
  paid: "paid",
  failed: "failed",
  expired: "expired",
  canceled: "canceled",
};

/** The checkout form (owners), or what a member or an account without providers is told. */
export async function checkoutSection(
  kit: ConsoleKit,
  session: AccountSession,
  state: CheckoutState = {},
): Promise<SafeHtml> {
  const account = await kit.ctx.accounts.getAccount(session.accountId);
  const currency = (account?.currency ?? "USD") as PaymentCurrency;
  const providers = kit.ctx.payments.enabledFor(currency);
  const heading = html`<h2 id="topup-heading">Top up</h2>`;
  if (providers.length === 0) {
    return html`${heading}
<p>The balance is prepaid in ${currency}. Card payments are not enabled on this gengate: to add money, ask the operator
of this gengate, who credits the account (the credit appears below and in the <a href="/console/wallet">wallet</a>).</p>`;
  }
  if (session.role !== "owner") {
    return html`${heading}
<p>The balance is prepaid in ${currency}. Only an owner of this account can top it up here.</p>`;
  }
  const limits = kit.ctx.payments.settings().amounts[currency];
  const presets = limits.presetsMicro.map(formatMicro);
  const chosen = state.preset ?? presets[0] ?? "";
  return html`${heading}
<form class="stack checkout" method="post" action="/console/billing/checkout" aria-labelledby="topup-heading">
  ${csrfField(session)}
  ${formError(state.error)}
  ${
    presets.length
      ? html`<fieldset class="presets">
    <legend>Amount</legend>
    ${presets.map(
      (p) =>
        html`<label class="preset"><input type="radio" name="preset" value="${p}"${p === chosen && !state.amount ? html` checked` : null}> ${formatMoney(parseDecimalToMicro(p)!, currency)}</label>`,
    )}
  </fieldset>`
      : null
  }
  <label>Other amount (${currency}) <span class="hint">From ${formatMoney(limits.minimumMicro, currency)} to ${formatMoney(limits.maximumMicro, currency)}, at most 2 decimals; it replaces the amount chosen above.</span>
    <input name="amount" inputmode="decimal" maxlength="20" value="${state.amount ?? ""}" autocomplete="off"></label>
  <div class="button-row">${providers.map(
    (p) =>
      html`<button type="submit" name="provider" value="${p}">Checkout with ${PROVIDER_LABEL[p]}</button>`,
  )}</div>
  <p class="hint">You pay on ${providers.map((p, i) => html`${i ? " or " : null}${PROVIDER_LABEL[p]}`)}'s page and come back here.
  The balance grows once the payment is confirmed to this server; a receipt is then listed below.</p>
</form>`;
}

/** The account's latest orders with their receipts (owners), for the billing page. */
export async function ordersSection(kit: ConsoleKit, session: AccountSession): Promise<SafeHtml | null> {
  if (session.role !== "owner") return null;
  const rows = await kit.ctx.payments.orders.list({ accountId: session.accountId, limit: ORDERS_SHOWN });
  if (rows.length === 0) return null;
  return html`<h2>Payments</h2>
${tableBox(
  "Payments",
  html`<table id="orders">
<caption class="visually-hidden">Payments</caption>
<thead><tr><th scope="col">Started</th><th scope="col">Order</th><th scope="col">Through</th>
<th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Receipt</th></tr></thead>
<tbody>${rows.map(
    (o) => html`<tr data-order="${o.id}">
  <td>${formatTime(o.created_at)}</td>
  <td class="mono">${o.id}</td>
  <td>${PROVIDER_LABEL[o.provider]}</td>
  <td class="num">${money(o.amount_micro, o.currency)}</td>
  <td>${STATUS_TEXT[o.status]}${o.refunded_micro > 0n ? html` (refunded ${money(o.refunded_micro, o.currency)})` : null}</td>
  <td>${o.status === "paid" ? html`<a href="/console/billing/receipts/${o.id}">Receipt<span class="visually-hidden"> for ${o.id}</span></a>` : ""}</td>
</tr>`,
  )}</tbody></table>`,
)}`;
}

/** The account's order named by `id`, or 404 (unknown, malformed, or another account's). */
export async function ownOrder(
  kit: ConsoleKit,
  session: AccountSession,
  id: string | null,
): Promise<OrderRow> {
  const order =
    id && ORDER_ID.test(id) ? await kit.ctx.payments.orders.getOwned(id, session.accountId) : null;
  if (!order) throw new DomainError("not_found", "There is no such payment for this account.");
  return order;
}

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
  const order = await ownOrder(kit, s, c.url.searchParams.get("order"));
  const canceled = c.url.searchParams.get("canceled") === "1";
  const who = PROVIDER_LABEL[order.provider];
  const amount = money(order.amount_micro, order.currency);
  let message: SafeHtml;
  if (order.status === "paid") {
    message = html`<p class="notice ok" role="status">Paid: ${amount} was added to your balance.</p>
<p><a href="/console/billing/receipts/${order.id}">Receipt</a> · <a href="/console/billing">Billing</a></p>`;
  } else if (order.status === "created" || order.status === "pending") {
    message = canceled
      ? html`<p class="notice warn" role="status">You left ${who}'s page without paying: nothing was charged. The order expires by itself.</p>
<p><a href="/console/billing">Back to billing</a></p>`
      : html`<p class="notice" role="status">Waiting for ${who} to confirm the payment of ${amount}. This page does not credit anything by itself:
the balance grows only when ${who} confirms the payment to this server, usually within seconds.</p>
<p><a href="/console/billing/return?order=${order.id}">Check again</a> · <a href="/console/billing">Billing</a></p>`;
  } else {
    message = html`<p class="notice error" role="status">This payment is ${STATUS_TEXT[order.status]}: nothing was added to your balance.</p>
<p><a href="/console/billing">Back to billing</a></p>`;
  }
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

export function billingCheckoutPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/billing/checkout",
      kit.action(async (c) => {
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
          if (!(err instanceof DomainError) || err.code === "not_found" || err.code === "forbidden")
            throw err;
          const res = await checkoutPage(c, kit, { ...state, error: err.message }, httpStatus(err.code));
          if (err.retryAfterSeconds) res.headers.set("retry-after", String(err.retryAfterSeconds));
          return res;
        }
      }),
    )
    .get(
      "/console/billing/return",
      kit.page(async (c) => await returnPage(c, kit)),
    );
}
