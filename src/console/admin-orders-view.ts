/**
 * The operator's orders pages' HTML (admin-orders-pages.ts): filters, orders, paid totals, the
 * payment-notification log, one order's facts.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import {
  NOTIFICATION_OUTCOMES,
  type NotificationOutcome,
  type NotificationRow,
  ORDER_STATUSES,
  type OrderRow,
  type OrderStatus,
  type OrderStore,
} from "../payments/order-store.ts";
import { PROVIDER_LABEL, PROVIDERS, type ProviderName } from "../payments/provider.ts";
import { formatMoney, formatTime } from "./format.ts";
import { tableBox } from "./money-view.ts";

function options<T extends string>(
  all: readonly T[],
  chosen: string | null,
  label: (v: T) => string,
): SafeHtml {
  return html`<option value=""${chosen ? null : html` selected`}>Any</option>${all.map(
    (v) => html`<option value="${v}"${v === chosen ? html` selected` : null}>${label(v)}</option>`,
  )}`;
}

function orderRows(rows: OrderRow[]): SafeHtml {
  if (rows.length === 0) return html`<p>No orders match.</p>`;
  return tableBox(
    "Orders",
    html`<table id="orders">
<thead><tr><th scope="col">Created</th><th scope="col">Order</th><th scope="col">Account</th><th scope="col">Provider</th>
<th scope="col">Provider reference</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Paid</th><th scope="col" class="num">Refunded</th></tr></thead>
<tbody>${rows.map(
      (o) => html`<tr data-order="${o.id}">
  <td>${formatTime(o.created_at)}</td>
  <td class="mono"><a href="/console/admin/orders/${o.id}">${o.id}</a></td>
  <td class="mono"><a href="/console/admin/accounts/${o.account_id}">${o.account_id}</a></td>
  <td>${PROVIDER_LABEL[o.provider]}</td>
  <td class="mono">${o.provider_ref ?? "—"}</td>
  <td class="num">${formatMoney(o.amount_micro, o.currency)}</td>
  <td>${o.status}</td>
  <td>${o.paid_at === null ? "—" : formatTime(o.paid_at)}</td>
  <td class="num">${o.refunded_micro > 0n ? formatMoney(o.refunded_micro, o.currency) : "—"}</td>
</tr>`,
    )}</tbody></table>`,
  );
}

function notificationRows(rows: NotificationRow[]): SafeHtml {
  if (rows.length === 0) return html`<p>No notifications.</p>`;
  return tableBox(
    "Payment notifications",
    html`<table id="notifications">
<thead><tr><th scope="col">Received</th><th scope="col">Provider</th><th scope="col">Event</th><th scope="col">Order</th><th scope="col">Outcome</th><th scope="col">Detail</th></tr></thead>
<tbody>${rows.map(
      (n) => html`<tr>
  <td>${formatTime(n.received_at)}</td>
  <td>${PROVIDER_LABEL[n.provider]}</td>
  <td class="mono">${n.event_type ?? ""} ${n.event_id ?? ""}</td>
  <td class="mono">${n.order_id ? html`<a href="/console/admin/orders/${n.order_id}">${n.order_id}</a>` : "—"}</td>
  <td>${n.outcome}</td>
  <td class="wrap">${n.detail ?? ""}</td>
</tr>`,
    )}</tbody></table>`,
  );
}

/** The orders page: filters, a page of orders, paid totals, the notification log. */
export function ordersBody(
  f: {
    status: OrderStatus | null;
    provider: ProviderName | null;
    outcome: NotificationOutcome | null;
    account: string;
    find: string;
  },
  rows: OrderRow[],
  next: string | null,
  totals: Awaited<ReturnType<OrderStore["paidTotals"]>>,
  notifications: NotificationRow[],
): SafeHtml {
  const { status, provider, outcome, account, find } = f;
  const filters = new URLSearchParams();
  if (status) filters.set("status", status);
  if (provider) filters.set("provider", provider);
  if (account) filters.set("account", account);
  return html`<h1>Orders</h1>
<p class="hint">Payment orders, newest first. Each paid order is one TOPUP entry in its account's wallet; the provider reference
is the Checkout Session id (Stripe) or payment id (YooKassa) to look up in the provider's dashboard.</p>
<form class="filters" method="get" action="/console/admin/orders" role="search">
  <label>Status <select name="status">${options(ORDER_STATUSES, status, (v) => v)}</select></label>
  <label>Provider <select name="provider">${options(PROVIDERS, provider, (v) => PROVIDER_LABEL[v])}</select></label>
  <label>Account <input name="account" value="${account}" maxlength="80" placeholder="acct_…" autocomplete="off"></label>
  <label>Order or reference <input type="search" name="find" value="${find}" maxlength="200" autocomplete="off"></label>
  <button type="submit">Filter</button>
  <a href="/console/admin/orders">All orders</a>
</form>
${orderRows(rows)}
${next ? html`<p><a class="button secondary" href="/console/admin/orders?${filters.toString()}${filters.size ? "&" : ""}before=${next}">Older</a></p>` : null}
<h2>Paid totals</h2>
${
  totals.length
    ? html`<ul>${totals.map(
        (t) =>
          html`<li>${PROVIDER_LABEL[t.provider]}: ${t.orders} paid orders, ${formatMoney(t.paid, t.currency)}${t.refunded > 0n ? html`, of which ${formatMoney(t.refunded, t.currency)} refunded` : null}</li>`,
      )}</ul>`
    : html`<p>No paid orders yet.</p>`
}
<h2 id="log-heading">Notification log</h2>
<form class="filters" method="get" action="/console/admin/orders" aria-labelledby="log-heading">
  <label>Outcome <select name="outcome">${options(NOTIFICATION_OUTCOMES, outcome, (v) => v)}</select></label>
  <button type="submit" class="secondary">Show</button>
</form>
${notificationRows(notifications)}`;
}

/** One order: its facts, how to record a refund, its notifications. */
export function orderBody(o: OrderRow, notifications: NotificationRow[]): SafeHtml {
  return html`<p><a href="/console/admin/orders">← All orders</a></p>
<h1 class="mono wrap-anywhere">${o.id}</h1>
<dl class="facts">
  <dt>Status</dt><dd>${o.status}${o.failure ? html` (${o.failure})` : null}</dd>
  <dt>Account</dt><dd class="mono"><a href="/console/admin/accounts/${o.account_id}">${o.account_id}</a></dd>
  <dt>Amount</dt><dd>${formatMoney(o.amount_micro, o.currency)}</dd>
  <dt>Refunded</dt><dd>${formatMoney(o.refunded_micro, o.currency)}</dd>
  <dt>Provider</dt><dd>${PROVIDER_LABEL[o.provider]}, reference <span class="mono">${o.provider_ref ?? "—"}</span></dd>
  <dt>Created</dt><dd>${formatTime(o.created_at)}</dd>
  <dt>Expires</dt><dd>${formatTime(o.expires_at)}</dd>
  <dt>Paid</dt><dd>${o.paid_at === null ? "—" : formatTime(o.paid_at)}</dd>
</dl>
<p class="hint">Refunds: refund the money in the provider's dashboard, then record it with
<code>gengate order refund ${o.id} --reason TEXT</code> or <code>POST /admin/v1/orders/${o.id}/refund</code>.</p>
<h2>Notifications</h2>
${notificationRows(notifications)}`;
}
