import { DomainError } from "../lib/errors.ts";
import { ORDER_ID, type OrderFilter, type OrderRow, type OrderStore } from "./order-store.ts";

/**
 * The operator's search over payment orders (the console's orders page): one order by its id or by
 * a provider's reference (a Stripe Checkout Session id or a YooKassa payment id, tried in that
 * order), or a filtered page newest first with the id to page on.
 */
export interface OrderSearchDeps {
  orders: Pick<OrderStore, "get" | "byProviderRef" | "list">;
}

export async function searchOrders(
  deps: OrderSearchDeps,
  find: string,
  filter: Omit<OrderFilter, "before" | "limit">,
  before: string,
  limit: number,
): Promise<{ rows: OrderRow[]; next: string | null }> {
  const orders = deps.orders;
  if (find) {
    const one = ORDER_ID.test(find)
      ? await orders.get(find)
      : ((await orders.byProviderRef("stripe", find)) ?? (await orders.byProviderRef("yookassa", find)));
    return { rows: one ? [one] : [], next: null };
  }
  const got = await orders.list({
    ...filter,
    before: ORDER_ID.test(before) ? before : null,
    limit: limit + 1,
  });
  const rows = got.slice(0, limit);
  return { rows, next: got.length > limit ? rows[rows.length - 1]!.id : null };
}

/** The account's order named by `id`, or 404 (unknown, malformed, or another account's). */
export async function ownedOrder(
  deps: { orders: Pick<OrderStore, "getOwned"> },
  accountId: string,
  id: string | null,
): Promise<OrderRow> {
  const order = id && ORDER_ID.test(id) ? await deps.orders.getOwned(id, accountId) : null;
  if (!order) throw new DomainError("not_found", "There is no such payment for this account.");
  return order;
}
