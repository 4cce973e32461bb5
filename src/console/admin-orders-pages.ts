/**
 * The operator's orders page (/console/admin/orders): every payment order with filters (status,
 * provider, account, or one order or provider reference) for reconciliation with the providers'
 * dashboards, the paid totals, and the payment-notification log (filter by outcome). One order's
 * page shows its notifications. Operators only (requireOperator on every route).
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import {
  NOTIFICATION_OUTCOMES,
  type NotificationOutcome,
  type NotificationRow,
  ORDER_ID,
  ORDER_STATUSES,
  type OrderRow,
  type OrderStatus,
} from "../payments/orders.ts";
import { PROVIDER_LABEL, PROVIDERS, type ProviderName } from "../payments/provider.ts";
import { adminPage } from "./admin-view.ts";
import { formatMoney, formatTime } from "./format.ts";
import { type ConsoleKit, type PageContext, requireOperator } from "./kit.ts";
import { tableBox } from "./money-view.ts";

const LIST_SIZE = 50;

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

async function ordersPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const q = c.url.searchParams;
  const pick = <T extends string>(name: string, all: readonly T[]): T | null => {
    const v = q.get(name) ?? "";
    if (!v) return null;
    if (!all.includes(v as T))
      throw new DomainError("validation_error", `Unknown ${name} "${v.slice(0, 40)}".`);
    return v as T;
  };
  const status = pick<OrderStatus>("status", ORDER_STATUSES);
  const provider = pick<ProviderName>("provider", PROVIDERS);
  const outcome = pick<NotificationOutcome>("outcome", NOTIFICATION_OUTCOMES);
  const account = (q.get("account") ?? "").trim().slice(0, 80);
  if (account && !/^acct_[0-9A-Za-z]{8,64}$/.test(account))
    throw new DomainError("validation_error", "Account must be an account id (acct_…).");
  const find = (q.get("find") ?? "").trim().slice(0, 200);
  const before = q.get("before") ?? "";
  const orders = kit.ctx.payments.orders;
  let rows: OrderRow[];
  let next: string | null = null;
  if (find) {
    const one = ORDER_ID.test(find)
      ? await orders.get(find)
      : ((await orders.byProviderRef("stripe", find)) ?? (await orders.byProviderRef("yookassa", find)));
    rows = one ? [one] : [];
  } else {
    const got = await orders.list({
      status,
      provider,
      accountId: account || null,
      before: ORDER_ID.test(before) ? before : null,
      limit: LIST_SIZE + 1,
    });
    rows = got.slice(0, LIST_SIZE);
    if (got.length > LIST_SIZE) next = rows[rows.length - 1]!.id;
  }
  const totals = await orders.paidTotals();
  const filters = new URLSearchParams();
  if (status) filters.set("status", status);
  if (provider) filters.set("provider", provider);
  if (account) filters.set("account", account);
  const body = html`<h1>Orders</h1>
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
${notificationRows(await orders.notifications({ outcome, limit: LIST_SIZE }))}`;
  return adminPage(c, "Orders", "/console/admin/orders", body);
}

async function orderPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const id = c.params.id ?? "";
  const o = ORDER_ID.test(id) ? await kit.ctx.payments.orders.get(id) : null;
  if (!o) throw new DomainError("not_found", `No order ${id}.`);
  const body = html`<p><a href="/console/admin/orders">← All orders</a></p>
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
${notificationRows(await kit.ctx.payments.orders.notificationsOf(o.id))}`;
  return adminPage(c, o.id, "/console/admin/orders", body);
}

export function adminOrdersPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin/orders",
      kit.page(async (c) => await ordersPage(c, kit)),
    )
    .get(
      "/console/admin/orders/:id",
      kit.page(async (c) => await orderPage(c, kit)),
    );
}
