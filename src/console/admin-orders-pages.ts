/**
 * The operator's orders page (/console/admin/orders): every payment order with filters (status,
 * provider, account, or one order or provider reference) for reconciliation with the providers'
 * dashboards, the paid totals, and the payment-notification log (filter by outcome). One order's
 * page shows its notifications. Operators only (requireOperator on every route).
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { searchOrders } from "../payments/order-search.ts";
import {
  NOTIFICATION_OUTCOMES,
  type NotificationOutcome,
  ORDER_ID,
  ORDER_STATUSES,
  type OrderStatus,
} from "../payments/order-store.ts";
import { PROVIDERS, type ProviderName } from "../payments/provider.ts";
import { orderBody, ordersBody } from "./admin-orders-view.ts";
import { ACCOUNT_ID, adminPage, LIST_SIZE } from "./admin-view.ts";
import { type ConsoleKit, type PageContext, requireOperator } from "./kit.ts";

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
  if (account && !ACCOUNT_ID.test(account))
    throw new DomainError("validation_error", "Account must be an account id (acct_…).");
  const find = (q.get("find") ?? "").trim().slice(0, 200);
  const before = q.get("before") ?? "";
  const orders = kit.ctx.payments.orders;
  const { rows, next } = await searchOrders(
    { orders },
    find,
    { status, provider, accountId: account || null },
    before,
    LIST_SIZE,
  );
  const totals = await orders.paidTotals();
  const notifications = await orders.notifications({ outcome, limit: LIST_SIZE });
  const body = ordersBody({ status, provider, outcome, account, find }, rows, next, totals, notifications);
  return adminPage(c, "Orders", "/console/admin/orders", body);
}

async function orderPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const id = c.params.id ?? "";
  const o = ORDER_ID.test(id) ? await kit.ctx.payments.orders.get(id) : null;
  if (!o) throw new DomainError("not_found", `No order ${id}.`);
  const body = orderBody(o, await kit.ctx.payments.orders.notificationsOf(o.id));
  return adminPage(c, o.id, "/console/admin/orders", body);
}

export function adminOrdersPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin/orders",
      kit.page((c) => ordersPage(c, kit)),
    )
    .get(
      "/console/admin/orders/:id",
      kit.page((c) => orderPage(c, kit)),
    );
}
