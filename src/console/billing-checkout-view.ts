/**
 * The billing page's payment HTML (billing-checkout-pages.ts, billing-pages.ts): the checkout form
 * (preset and custom amounts, a button per enabled provider of the account's currency), the
 * account's latest orders with their receipts, and what the return page says of an order.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import type { OrderRow } from "../payments/order-store.ts";
import { type PaymentCurrency, PROVIDER_LABEL } from "../payments/provider.ts";
import { formatMoney, formatTime } from "./format.ts";
import { type AccountSession, formError, type KitFor } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { money, tableBox } from "./money-view.ts";

const ORDERS_SHOWN = 20;

export interface CheckoutState {
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
  kit: KitFor<"accounts">,
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
export async function ordersSection(
  kit: KitFor<"accounts">,
  session: AccountSession,
): Promise<SafeHtml | null> {
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

/** What the return page says of an order: paid, still waiting (or left unpaid), or failed. */
export function returnMessage(order: OrderRow, canceled: boolean): SafeHtml {
  const who = PROVIDER_LABEL[order.provider];
  const amount = money(order.amount_micro, order.currency);
  if (order.status === "paid") {
    return html`<p class="notice ok" role="status">Paid: ${amount} was added to your balance.</p>
<p><a href="/console/billing/receipts/${order.id}">Receipt</a> · <a href="/console/billing">Billing</a></p>`;
  }
  if (order.status === "created" || order.status === "pending") {
    return canceled
      ? html`<p class="notice warn" role="status">You left ${who}'s page without paying: nothing was charged. The order expires by itself.</p>
<p><a href="/console/billing">Back to billing</a></p>`
      : html`<p class="notice" role="status">Waiting for ${who} to confirm the payment of ${amount}. This page does not credit anything by itself:
the balance grows only when ${who} confirms the payment to this server, usually within seconds.</p>
<p><a href="/console/billing/return?order=${order.id}">Check again</a> · <a href="/console/billing">Billing</a></p>`;
  }
  return html`<p class="notice error" role="status">This payment is ${STATUS_TEXT[order.status]}: nothing was added to your balance.</p>
<p><a href="/console/billing">Back to billing</a></p>`;
}
