import type { Sql } from "../db/sql.ts";
import { jsonList, SqlStore, skipLocked } from "../db/store.ts";

export type WebhookEvent = "COMPLETED" | "FAILED" | "CANCELLED";
/** Events about an account rather than a request; their body is stored when enqueued. */
export type AccountEvent = "BALANCE_LOW";
export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface EnqueueInput {
  requestId: string;
  accountId: string;
  url: string;
  event: WebhookEvent;
}

/** What the request record shows about its webhook. */
export interface DeliveryState {
  url: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

/** A delivery leased to one attempt; `lease` is the token that attempt's result must match. */
export interface ClaimedDelivery {
  id: string;
  /** Null for an account-level event. */
  requestId: string | null;
  accountId: string;
  url: string;
  event: WebhookEvent | AccountEvent;
  /** The stored body of an account-level event; null: render the request record at send time. */
  payload: string | null;
  /** Attempts made before this one. */
  attempts: number;
  lease: number;
}

interface DeliveryRow {
  id: string;
  request_id: string | null;
  account_id: string;
  url: string;
  event: WebhookEvent | AccountEvent;
  payload: string | null;
  status: DeliveryStatus;
  attempts: bigint;
  next_attempt_at: bigint;
  last_status: bigint | null;
  last_error: string | null;
  created_at: bigint;
}

export interface WebhookOutboxOptions {
  /** Clock in epoch ms (when enqueued rows become due). */
  now?: () => number;
}

/** Error text stored on the record is for people; a runaway message must not bloat the row. */
const MAX_ERROR_LENGTH = 500;

/**
 * The durable outbox of webhook deliveries (table webhook_deliveries). Writing side: enqueue, called
 * inside the transaction that commits a job's final state. Dispatcher side: claim due rows under a
 * lease and record each attempt's outcome, guarded by that lease so a late result of an attempt
 * whose lease lapsed (and was re-claimed) cannot overwrite a newer one.
 */
export class WebhookOutbox extends SqlStore {
  private readonly now: () => number;

  protected override s = {
    insert: this.q<null, [string, string, string, string, string, number]>(
      `INSERT INTO webhook_deliveries
           (id, request_id, account_id, url, event, status, attempts, next_attempt_at, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6) ON CONFLICT DO NOTHING`,
    ),
    insertAccountEvent: this.q<null, [string, string, string, string, string, number]>(
      `INSERT INTO webhook_deliveries
           (id, request_id, account_id, url, event, payload, status, attempts, next_attempt_at, created_at)
         VALUES (?1, NULL, ?2, ?3, ?4, ?5, 'pending', 0, ?6, ?6) ON CONFLICT DO NOTHING`,
    ),
    forRequest: this.q<DeliveryRow, [string]>(
      `SELECT * FROM webhook_deliveries WHERE request_id = ?
         ORDER BY created_at DESC, ${this.sql.dialect === "postgres" ? "id" : "rowid"} DESC LIMIT 1`,
    ),
    // One statement, so two dispatchers (of any instance) never claim the same row: once
    // next_attempt_at moves past now, the row is no longer due for anyone else. PostgreSQL (READ
    // COMMITTED) re-checks only the outer WHERE on a row a concurrent claim changed, not the
    // sub-select: hence the due condition repeated outside it (else both claims would take the
    // row), and SKIP LOCKED so a concurrent claim takes other due rows instead of waiting.
    claim: this.q<DeliveryRow, [number, number, number]>(
      `UPDATE webhook_deliveries SET next_attempt_at = ?2
         WHERE id IN (
           SELECT id FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= ?1
           ORDER BY next_attempt_at, created_at, id LIMIT ?3${skipLocked(this.sql)})
           AND status = 'pending' AND next_attempt_at <= ?1
         RETURNING *`,
    ),
    nextDue: this.q<{ t: bigint | null }, []>(
      "SELECT min(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending'",
    ),
    finish: this.q<
      { id: string },
      [string, number | null, string | null, number, number | null, string, number]
    >(
      `UPDATE webhook_deliveries
         SET status = ?1, attempts = attempts + 1, last_status = ?2, last_error = ?3,
             last_attempt_at = ?4, delivered_at = ?5
         WHERE id = ?6 AND status = 'pending' AND next_attempt_at = ?7
         RETURNING id`,
    ),
    retry: this.q<{ id: string }, [number, number | null, string | null, number, string, number]>(
      `UPDATE webhook_deliveries
         SET attempts = attempts + 1, next_attempt_at = ?1, last_status = ?2, last_error = ?3,
             last_attempt_at = ?4
         WHERE id = ?5 AND status = 'pending' AND next_attempt_at = ?6
         RETURNING id`,
    ),
    // Through webhook_deliveries_request: the deliveries of the listed requests only.
    deleteForRequests: this.q<null, [string]>(
      `DELETE FROM webhook_deliveries WHERE request_id IN (${jsonList(this.sql)})`,
    ),
  };

  constructor(sql: Sql, options: WebhookOutboxOptions = {}) {
    super(sql);
    this.now = options.now ?? Date.now;
  }

  /** The webhook-id: stable per request and event, so a retried enqueue is the same delivery. */
  static deliveryId(requestId: string, event: WebhookEvent): string {
    return `msg_${requestId}_${event.toLowerCase()}`;
  }

  /**
   * Records that a delivery is owed, due now. A single INSERT: call it bound to the transaction that
   * writes the job's final state (`outbox.in(tx).enqueue`), so the delivery exists if and only if that
   * state committed, and survives restarts. A second call for the same request and event is a no-op.
   */
  async enqueue(input: EnqueueInput): Promise<void> {
    await this.s.insert.run(
      WebhookOutbox.deliveryId(input.requestId, input.event),
      input.requestId,
      input.accountId,
      input.url,
      input.event,
      this.now(),
    );
  }

  /**
   * Records an account-level delivery (a low-balance alert) with its body, due now. Like enqueue:
   * synchronous, one INSERT, inside the transaction of its cause. `id` is the webhook-id.
   */
  async enqueueAccountEvent(input: {
    id: string;
    accountId: string;
    url: string;
    event: AccountEvent;
    payload: string;
  }): Promise<void> {
    await this.s.insertAccountEvent.run(
      input.id,
      input.accountId,
      input.url,
      input.event,
      input.payload,
      this.now(),
    );
  }

  /**
   * Deletes every delivery of the requests in `idsJson` (a JSON array of request ids: the retention
   * purge of their records, src/queue/job-retention-store.ts), whatever its state.
   */
  async deleteForRequests(idsJson: string): Promise<number> {
    return (await this.s.deleteForRequests.run(idsJson)).changes;
  }

  /** The request's latest delivery, or null when none was owed (yet). */
  async deliveryFor(requestId: string): Promise<DeliveryState | null> {
    const row = await this.s.forRequest.get(requestId);
    if (!row) return null;
    return {
      url: row.url,
      status: row.status,
      attempts: Number(row.attempts),
      last_status: row.last_status === null ? null : Number(row.last_status),
      last_error: row.last_error,
    };
  }

  /** Leases up to `limit` due deliveries until now + leaseMs, oldest due first. */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const lease = now + leaseMs;
    // RETURNING order is unspecified; launch the batch oldest first.
    const rows = await this.s.claim.all(now, lease, limit);
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    return rows.map((r) => ({
      id: r.id,
      requestId: r.request_id,
      accountId: r.account_id,
      url: r.url,
      event: r.event,
      payload: r.payload,
      attempts: Number(r.attempts),
      lease,
    }));
  }

  /** Earliest next_attempt_at of a pending delivery (leases included), or null. */
  async nextDueAt(): Promise<number | null> {
    const t = (await this.s.nextDue.get())?.t ?? null;
    return t === null ? null : Number(t);
  }

  /** A 2xx: done. False when the lease was lost (another attempt owns the row now). */
  async markDelivered(c: ClaimedDelivery, now: number, status: number): Promise<boolean> {
    return (await this.s.finish.get("delivered", status, null, now, now, c.id, c.lease)) !== null;
  }

  /** Final failure (410, schedule exhausted, record gone). False when the lease was lost. */
  async markFailed(
    c: ClaimedDelivery,
    now: number,
    status: number | null,
    error: string | null,
  ): Promise<boolean> {
    return (await this.s.finish.get("failed", status, clip(error), now, null, c.id, c.lease)) !== null;
  }

  /** Another attempt at `nextAt`. False when the lease was lost. */
  async markRetry(
    c: ClaimedDelivery,
    now: number,
    status: number | null,
    error: string | null,
    nextAt: number,
  ): Promise<boolean> {
    return (await this.s.retry.get(nextAt, status, clip(error), now, c.id, c.lease)) !== null;
  }
}

function clip(text: string | null): string | null {
  return text !== null && text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
