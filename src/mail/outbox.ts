import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { newTimeOrderedId } from "../lib/ids.ts";

export type MailKind = "invite" | "password_reset" | "balance_low";
export type MailStatus = "pending" | "sent" | "failed";

/** A message as the templates make it. */
export interface MailMessage {
  subject: string;
  text: string;
  html: string;
}

/** A message leased to one attempt; `lease` is the token that attempt's result must match. */
export interface ClaimedMail extends MailMessage {
  id: string;
  kind: MailKind;
  to: string[];
  /** Attempts made before this one. */
  attempts: number;
  lease: number;
}

/** What the operator pages show (no bodies: they may hold one-time links). */
export interface MailView {
  id: string;
  kind: MailKind;
  to: string[];
  subject: string;
  accountId: string | null;
  status: MailStatus;
  attempts: number;
  nextAttemptAt: number;
  lastAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
}

interface MailRow {
  id: string;
  kind: MailKind;
  to_addrs: string;
  subject: string;
  text_body: string;
  html_body: string;
  account_id: string | null;
  status: MailStatus;
  attempts: bigint;
  next_attempt_at: bigint;
  last_attempt_at: bigint | null;
  last_error: string | null;
  created_at: bigint;
  sent_at: bigint | null;
}

const MAX_ERROR_LENGTH = 500;

/**
 * The durable mail outbox (table mail_outbox), shaped like the webhook outbox: enqueue inside the
 * transaction of the cause; the sender claims due rows under a lease (one UPDATE moves
 * next_attempt_at forward, so no two senders take the same row) and records each outcome guarded
 * by that lease. Bodies may carry one-time links, so they are emptied when a row is finished.
 */
export class MailOutbox extends SqlStore {
  private readonly now: () => number;

  protected override s = {
    insert: this.q<null, [string, string, string, string, string, string, string | null, number]>(
      `INSERT INTO mail_outbox (id, kind, to_addrs, subject, text_body, html_body, account_id, status,
           attempts, next_attempt_at, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', 0, ?8, ?8)`,
    ),
    // Like the webhook outbox's claim: the outer WHERE repeats the due condition (re-checked by
    // PostgreSQL after a lock wait) and the subquery skips rows a racing claim holds.
    claim: this.q<MailRow, [number, number, number]>(
      `UPDATE mail_outbox SET next_attempt_at = ?2
         WHERE id IN (
           SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= ?1
           ORDER BY next_attempt_at, created_at, id LIMIT ?3${this.sql.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : ""})
           AND status = 'pending' AND next_attempt_at <= ?1
         RETURNING *`,
    ),
    nextDue: this.q<{ t: bigint | null }, []>(
      "SELECT min(next_attempt_at) AS t FROM mail_outbox WHERE status = 'pending'",
    ),
    finish: this.q<{ id: string }, [string, string | null, number, number | null, string, number]>(
      `UPDATE mail_outbox
         SET status = ?1, attempts = attempts + 1, last_error = ?2, last_attempt_at = ?3, sent_at = ?4,
             text_body = '', html_body = ''
         WHERE id = ?5 AND status = 'pending' AND next_attempt_at = ?6
         RETURNING id`,
    ),
    retry: this.q<{ id: string }, [number, string | null, number, string, number]>(
      `UPDATE mail_outbox
         SET attempts = attempts + 1, next_attempt_at = ?1, last_error = ?2, last_attempt_at = ?3
         WHERE id = ?4 AND status = 'pending' AND next_attempt_at = ?5
         RETURNING id`,
    ),
    recent: this.q<MailRow, [number]>("SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?"),
    counts: this.q<{ status: MailStatus; n: bigint }, []>(
      "SELECT status, count(*) AS n FROM mail_outbox GROUP BY status",
    ),
    purge: this.q<null, [number]>("DELETE FROM mail_outbox WHERE status != 'pending' AND created_at < ?"),
  };

  constructor(sql: Sql, options: { now?: () => number } = {}) {
    super(sql);
    this.now = options.now ?? Date.now;
  }

  /** Records a message to send, due now. Synchronous, one INSERT: call it in the cause's transaction. */
  async enqueue(
    kind: MailKind,
    to: string[],
    message: MailMessage,
    accountId: string | null = null,
  ): Promise<string> {
    if (to.length === 0) throw new RangeError("mail: no recipient");
    const now = this.now();
    const id = newTimeOrderedId("mail", now);
    await this.s.insert.run(
      id,
      kind,
      JSON.stringify(to),
      message.subject,
      message.text,
      message.html,
      accountId,
      now,
    );
    return id;
  }

  /** Leases up to `limit` due messages until now + leaseMs, oldest first. */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<ClaimedMail[]> {
    if (limit <= 0) return [];
    const lease = now + leaseMs;
    const rows = await this.s.claim.all(now, lease, limit);
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      to: JSON.parse(r.to_addrs) as string[],
      subject: r.subject,
      text: r.text_body,
      html: r.html_body,
      attempts: Number(r.attempts),
      lease,
    }));
  }

  async nextDueAt(): Promise<number | null> {
    const t = (await this.s.nextDue.get())?.t ?? null;
    return t === null ? null : Number(t);
  }

  /** Accepted by the SMTP server. False when the lease was lost. */
  async markSent(c: ClaimedMail, now: number): Promise<boolean> {
    return (await this.s.finish.get("sent", null, now, now, c.id, c.lease)) !== null;
  }

  /** Given up (attempts exhausted or refused for good), with the reason. False when the lease was lost. */
  async markFailed(c: ClaimedMail, now: number, error: string): Promise<boolean> {
    return (await this.s.finish.get("failed", clip(error), now, null, c.id, c.lease)) !== null;
  }

  async markRetry(c: ClaimedMail, now: number, error: string, nextAt: number): Promise<boolean> {
    return (await this.s.retry.get(nextAt, clip(error), now, c.id, c.lease)) !== null;
  }

  /** The newest messages, for the operator page. */
  async recent(limit: number): Promise<MailView[]> {
    return (await this.s.recent.all(limit)).map((r) => ({
      id: r.id,
      kind: r.kind,
      to: JSON.parse(r.to_addrs) as string[],
      subject: r.subject,
      accountId: r.account_id,
      status: r.status,
      attempts: Number(r.attempts),
      nextAttemptAt: Number(r.next_attempt_at),
      lastAttemptAt: r.last_attempt_at === null ? null : Number(r.last_attempt_at),
      lastError: r.last_error,
      createdAt: Number(r.created_at),
      sentAt: r.sent_at === null ? null : Number(r.sent_at),
    }));
  }

  async counts(): Promise<Record<MailStatus, number>> {
    const out: Record<MailStatus, number> = { pending: 0, sent: 0, failed: 0 };
    for (const r of await this.s.counts.all()) out[r.status] = Number(r.n);
    return out;
  }

  /** Deletes finished rows created before `before` (epoch ms); pending ones stay. */
  async purgeFinished(before: number): Promise<number> {
    return (await this.s.purge.run(before)).changes;
  }
}

function clip(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
