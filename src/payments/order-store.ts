/**
 * OrderStore: the tables of migration 013, `orders` and `payment_notifications`. Every status
 * change is a compare-and-swap (`... WHERE status IN (...) RETURNING *`): an order is paid at most
 * once, and only from an open (or expired) state. Crediting and refunds call these inside the
 * service's own transaction, together with the ledger (src/payments/service.ts).
 */
import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import { rfc3339 } from "../lib/time.ts";
import type { PaymentCurrency, ProviderName } from "./provider.ts";

export type OrderStatus = "created" | "pending" | "paid" | "failed" | "expired" | "canceled";
export const ORDER_STATUSES: readonly OrderStatus[] = [
  "created",
  "pending",
  "paid",
  "failed",
  "expired",
  "canceled",
];
export const ORDER_ID = /^ord_[0-9A-Za-z]{8,64}$/;

export type NotificationOutcome =
  | "credited"
  | "credited_late"
  | "duplicate"
  | "forged"
  | "expired"
  | "mismatch"
  | "unknown_order"
  | "not_paid"
  | "closed"
  | "ignored"
  | "verify_failed";
export const NOTIFICATION_OUTCOMES: readonly NotificationOutcome[] = [
  "credited",
  "credited_late",
  "duplicate",
  "forged",
  "expired",
  "mismatch",
  "unknown_order",
  "not_paid",
  "closed",
  "ignored",
  "verify_failed",
];

export interface OrderRow {
  id: string;
  account_id: string;
  person_id: string | null;
  provider: ProviderName;
  currency: PaymentCurrency;
  amount_micro: bigint;
  status: OrderStatus;
  provider_ref: string | null;
  checkout_url: string | null;
  failure: string | null;
  created_at: bigint;
  expires_at: bigint;
  paid_at: bigint | null;
  refunded_micro: bigint;
}

export interface NotificationRow {
  id: bigint;
  provider: ProviderName;
  order_id: string | null;
  event_id: string | null;
  event_type: string | null;
  outcome: NotificationOutcome;
  detail: string | null;
  received_at: bigint;
}

export interface OrderFilter {
  accountId?: string | null;
  status?: OrderStatus | null;
  provider?: ProviderName | null;
  /** Orders older than this id (paging, newest first). */
  before?: string | null;
  limit: number;
}

/** Open orders: the customer may still pay. Paid from one of these, or late from expired. */
const PAYABLE = "('created', 'pending', 'expired')";

export class OrderStore extends SqlStore {
  protected override s = {
    insert: this.q<OrderRow, [string, string, string | null, string, string, bigint, number, number]>(
      `INSERT INTO orders (id, account_id, person_id, provider, currency, amount_micro, status, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, 'created', ?, ?) RETURNING *`,
    ),
    get: this.q<OrderRow, [string]>("SELECT * FROM orders WHERE id = ?"),
    byRef: this.q<OrderRow, [string, string]>("SELECT * FROM orders WHERE provider = ? AND provider_ref = ?"),
    attach: this.q<OrderRow, [string, string, string]>(
      `UPDATE orders SET status = 'pending', provider_ref = ?1, checkout_url = ?2
         WHERE id = ?3 AND status = 'created' RETURNING *`,
    ),
    close: this.q<OrderRow, [string, string | null, string]>(
      `UPDATE orders SET status = ?1, failure = coalesce(?2, failure)
         WHERE id = ?3 AND status IN ('created', 'pending') RETURNING *`,
    ),
    markPaid: this.q<OrderRow, [number, string, string]>(
      `UPDATE orders SET status = 'paid', paid_at = ?1, provider_ref = coalesce(provider_ref, ?2)
         WHERE id = ?3 AND status IN ${PAYABLE} RETURNING *`,
    ),
    pruneUnlinked: this.q("DELETE FROM payment_notifications WHERE order_id IS NULL AND received_at < ?"),
    expireDue: this.q<{ id: string }, [number]>(
      `UPDATE orders SET status = 'expired'
         WHERE status IN ('created', 'pending') AND expires_at <= ? RETURNING id`,
    ),
    refund: this.q<OrderRow, [bigint, string]>(
      `UPDATE orders SET refunded_micro = refunded_micro + ?1
         WHERE id = ?2 AND status = 'paid' AND refunded_micro + ?1 <= amount_micro RETURNING *`,
    ),
    log: this.q(
      `INSERT INTO payment_notifications (provider, order_id, event_id, event_type, outcome, detail, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    notificationsOf: this.q<NotificationRow, [string]>(
      "SELECT * FROM payment_notifications WHERE order_id = ? ORDER BY id",
    ),
  };

  constructor(sql: Sql) {
    super(sql);
  }

  async create(input: {
    accountId: string;
    personId: string | null;
    provider: ProviderName;
    currency: PaymentCurrency;
    amountMicro: bigint;
    now: number;
    ttlSeconds: number;
  }): Promise<OrderRow> {
    return (await this.s.insert.get(
      newTimeOrderedId("ord"),
      input.accountId,
      input.personId,
      input.provider,
      input.currency,
      input.amountMicro,
      input.now,
      input.now + input.ttlSeconds,
    ))!;
  }

  async get(id: string): Promise<OrderRow | null> {
    return ORDER_ID.test(id) ? await this.s.get.get(id) : null;
  }

  /** The order only if it belongs to the account (another account's id reads as missing). */
  async getOwned(id: string, accountId: string): Promise<OrderRow | null> {
    const o = await this.get(id);
    return o && o.account_id === accountId ? o : null;
  }

  async byProviderRef(provider: ProviderName, ref: string): Promise<OrderRow | null> {
    return await this.s.byRef.get(provider, ref);
  }

  /** created -> pending with the provider's checkout; null if the order is no longer created. */
  async attachCheckout(id: string, ref: string, url: string): Promise<OrderRow | null> {
    return await this.s.attach.get(ref, url, id);
  }

  /** created/pending -> failed, expired or canceled; null if it was not open. */
  async close(
    id: string,
    status: "failed" | "expired" | "canceled",
    failure: string | null = null,
  ): Promise<OrderRow | null> {
    return await this.s.close.get(status, failure, id);
  }

  /** created/pending/expired -> paid; null if it was paid already (or failed/canceled). */
  async markPaid(id: string, at: number, ref: string): Promise<OrderRow | null> {
    return await this.s.markPaid.get(at, ref, id);
  }

  /** Open orders past their expiry become expired; returns their ids. */
  async expireDue(now: number): Promise<string[]> {
    return (await this.s.expireDue.all(now)).map((r) => r.id);
  }

  /**
   * Forgets notifications that name no order of ours and arrived before `before` (epoch s), so
   * forged or stray deliveries cannot grow the log for ever; those about an order are kept with it.
   */
  async pruneUnlinked(before: number): Promise<number> {
    return (await this.s.pruneUnlinked.run(before)).changes;
  }

  /** Adds a refund, never above what was paid; null when it would be (or the order is not paid). */
  async addRefund(id: string, amountMicro: bigint): Promise<OrderRow | null> {
    return await this.s.refund.get(amountMicro, id);
  }

  async log(entry: {
    provider: ProviderName;
    orderId: string | null;
    eventId: string | null;
    eventType: string | null;
    outcome: NotificationOutcome;
    detail: string | null;
    at: number;
  }): Promise<void> {
    await this.s.log.run(
      entry.provider,
      entry.orderId,
      entry.eventId?.slice(0, 200) ?? null,
      entry.eventType?.slice(0, 100) ?? null,
      entry.outcome,
      entry.detail?.slice(0, 500) ?? null,
      entry.at,
    );
  }

  async list(f: OrderFilter): Promise<OrderRow[]> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (f.accountId) {
      where.push("account_id = ?");
      args.push(f.accountId);
    }
    if (f.status) {
      where.push("status = ?");
      args.push(f.status);
    }
    if (f.provider) {
      where.push("provider = ?");
      args.push(f.provider);
    }
    if (f.before) {
      where.push("id < ?");
      args.push(f.before);
    }
    args.push(f.limit);
    const sql = `SELECT * FROM orders ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return await this.q<OrderRow, (string | number)[]>(sql).all(...args);
  }

  async notificationsOf(orderId: string): Promise<NotificationRow[]> {
    return await this.s.notificationsOf.all(orderId);
  }

  async notifications(f: {
    outcome?: NotificationOutcome | null;
    before?: bigint | null;
    limit: number;
  }): Promise<NotificationRow[]> {
    const where: string[] = [];
    const args: (string | number | bigint)[] = [];
    if (f.outcome) {
      where.push("outcome = ?");
      args.push(f.outcome);
    }
    if (f.before) {
      where.push("id < ?");
      args.push(f.before);
    }
    args.push(f.limit);
    const sql = `SELECT * FROM payment_notifications ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return await this.q<NotificationRow, (string | number | bigint)[]>(sql).all(...args);
  }

  /** Paid totals per currency (the operator's reconciliation summary). */
  async paidTotals(): Promise<
    {
      currency: PaymentCurrency;
      provider: ProviderName;
      orders: bigint;
      paid: bigint;
      refunded: bigint;
    }[]
  > {
    return await this.q<
      { currency: PaymentCurrency; provider: ProviderName; orders: bigint; paid: bigint; refunded: bigint },
      []
    >(
      `SELECT currency, provider, count(*) AS orders, sum(amount_micro) AS paid, sum(refunded_micro) AS refunded
         FROM orders WHERE status = 'paid' GROUP BY currency, provider ORDER BY currency, provider`,
    ).all();
  }
}

/** An order as the admin API and the CLI show it (money as decimal strings of micro-units). */
export function orderView(o: OrderRow) {
  return {
    id: o.id,
    object: "order" as const,
    account_id: o.account_id,
    person_id: o.person_id,
    provider: o.provider,
    provider_ref: o.provider_ref,
    currency: o.currency,
    amount_micro: o.amount_micro.toString(),
    refunded_micro: o.refunded_micro.toString(),
    status: o.status,
    failure: o.failure,
    created_at: rfc3339(o.created_at)!,
    expires_at: rfc3339(o.expires_at)!,
    paid_at: rfc3339(o.paid_at),
  };
}

export function notificationView(n: NotificationRow) {
  return {
    id: n.id.toString(),
    provider: n.provider,
    order_id: n.order_id,
    event_id: n.event_id,
    event_type: n.event_type,
    outcome: n.outcome,
    detail: n.detail,
    received_at: rfc3339(n.received_at)!,
  };
}
