import { stringifyWithBigints } from "../lib/json.ts";
import { log } from "../lib/log.ts";
import { OutboxLoop } from "../lib/outbox-loop.ts";
import { DEFAULT_TIMEOUT_MS, postPinned } from "./deliver.ts";
import type { ClaimedDelivery, WebhookOutbox } from "./outbox.ts";
import type { WebhookSecretStore } from "./secret-store.ts";
import { signWebhook } from "./signing.ts";
import type { Resolver, WebhookPolicy } from "./url-policy.ts";

/** The bus channel that wakes every instance's dispatcher (empty payload; src/db/bus.ts). */
export const WEBHOOKS_CHANNEL = "webhooks";

/** The contract's retry delays after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

export interface DispatcherDeps {
  outbox: WebhookOutbox;
  secrets: WebhookSecretStore;
  /** The full request record at send time (so the body is current), or null if the request is gone. */
  renderRecord: (requestId: string) => Promise<unknown | null>;
  /** Read at every attempt, so a config reload applies to pending deliveries too. */
  policy: () => WebhookPolicy;
  /** Clock in epoch ms. */
  now?: () => number;
  /** Delays (ms) before retry 1, 2, ...; when exhausted the delivery fails. */
  schedule?: readonly number[];
  post?: typeof postPinned;
  /** Attempts in flight at once. Default 4. */
  concurrency?: number;
  /** Per-attempt time limit. Default 15 s. */
  timeoutMs?: number;
  /** How long a claim holds a row; must outlast an attempt. Default timeoutMs + 45 s. */
  leaseMs?: number;
  /** Longest sleep between scans, so rows enqueued by other processes are found. Default 30 s. */
  maxSleepMs?: number;
  /** How long stop() waits for attempts in flight. Default timeoutMs + 5 s. */
  stopTimeoutMs?: number;
  resolve?: Resolver;
  ca?: string | Buffer;
  /** Told the outcome of every attempt (the server's metrics count them). */
  onOutcome?: (outcome: AttemptOutcome) => void;
}

export type AttemptOutcome = "delivered" | "failed" | "retry" | "lost_lease";

function hostOf(raw: string): string {
  try {
    return new URL(raw).host;
  } catch {
    return "(invalid url)";
  }
}

/**
 * Sends what the outbox owes. One loop per process: claim due rows (at most `concurrency` in
 * flight), post each, record the outcome, then sleep until the next due time (capped, so rows
 * from other processes are found). `wake()` after an enqueue starts delivery at once.
 *
 * Delivery is at-least-once: a crash after the receiver answered but before the outcome is
 * recorded sends it again after the lease. Receivers deduplicate on webhook-id.
 */
export class WebhookDispatcher {
  private readonly now: () => number;
  private readonly schedule: readonly number[];
  private readonly post: typeof postPinned;
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly loop: OutboxLoop<ClaimedDelivery>;

  constructor(private readonly deps: DispatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.schedule = deps.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.post = deps.post ?? postPinned;
    this.concurrency = Math.max(1, deps.concurrency ?? 4);
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.leaseMs = deps.leaseMs ?? this.timeoutMs + 45_000;
    this.loop = new OutboxLoop({
      name: "webhook",
      concurrency: this.concurrency,
      maxSleepMs: deps.maxSleepMs ?? 30_000,
      stopTimeoutMs: deps.stopTimeoutMs ?? this.timeoutMs + 5_000,
      now: this.now,
      claim: async (limit) => await deps.outbox.claimDue(this.now(), limit, this.leaseMs),
      nextDueAt: async () => await deps.outbox.nextDueAt(),
      attempt: (c) => this.attempt(c),
      idOf: (c) => c.id,
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
  }

  /** Look for due deliveries now (call after an enqueue commits). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops claiming; waits (bounded) for attempts in flight to record their outcome. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * One pass without the loop: claims what is due (up to `concurrency`) and waits for those
   * attempts. For tests and one-shot tools; returns how many attempts were made.
   */
  async runDue(): Promise<number> {
    const claimed = await this.deps.outbox.claimDue(this.now(), this.concurrency, this.leaseMs);
    await Promise.all(claimed.map((c) => this.attempt(c)));
    return claimed.length;
  }

  /** One attempt: render, sign, post, record. Never throws for receiver or network problems. */
  private async attempt(c: ClaimedDelivery): Promise<AttemptOutcome> {
    const attempt = c.attempts + 1;
    let status: number | null = null;
    let error: string | null = null;
    let gone = false;
    try {
      // An account-level event carries its body; a request's record is rendered now (current).
      const record = c.payload ?? (c.requestId === null ? null : await this.deps.renderRecord(c.requestId));
      if (record === null || record === undefined) {
        gone = true;
      } else {
        const body = typeof record === "string" && c.payload !== null ? record : stringifyWithBigints(record);
        const timestamp = Math.floor(this.now() / 1000);
        // During a rotation overlap both secrets sign; receivers accept either (Standard Webhooks).
        const signature = (await this.deps.secrets.signingSecrets(c.accountId))
          .map((s) => signWebhook(s, c.id, timestamp, body))
          .join(" ");
        const headers = {
          "webhook-id": c.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        };
        const answer = await this.post(new URL(c.url), body, headers, {
          policy: this.deps.policy(),
          timeoutMs: this.timeoutMs,
          resolve: this.deps.resolve,
          ca: this.deps.ca,
        });
        status = answer.status;
        if (status < 200 || status > 299) error = `HTTP ${status}`;
      }
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }

    const now = this.now();
    let outcome: AttemptOutcome;
    let nextIn: number | undefined;
    let recorded: boolean;
    if (gone) {
      outcome = "failed";
      recorded = await this.deps.outbox.markFailed(c, now, null, "the request record no longer exists");
    } else if (status !== null && status >= 200 && status <= 299) {
      outcome = "delivered";
      recorded = await this.deps.outbox.markDelivered(c, now, status);
    } else if (status === 410) {
      // 410 Gone: the receiver says this endpoint is retired; retrying would be pestering.
      outcome = "failed";
      recorded = await this.deps.outbox.markFailed(c, now, status, "HTTP 410: the receiver asked to stop");
    } else if (attempt > this.schedule.length) {
      outcome = "failed";
      recorded = await this.deps.outbox.markFailed(
        c,
        now,
        status,
        `gave up after ${attempt} attempts: ${error}`,
      );
    } else {
      outcome = "retry";
      nextIn = this.schedule[attempt - 1]!;
      recorded = await this.deps.outbox.markRetry(c, now, status, error, now + nextIn);
    }
    if (!recorded) outcome = "lost_lease";
    this.deps.onOutcome?.(outcome);

    log(outcome === "delivered" ? "info" : "warn", "webhook attempt", {
      ...(c.requestId !== null ? { request_id: c.requestId } : { account_id: c.accountId, event: c.event }),
      webhook_id: c.id,
      // The host only: paths and queries of client URLs may carry their own secrets.
      host: hostOf(c.url),
      attempt,
      status,
      outcome,
      ...(error !== null ? { error } : {}),
      ...(nextIn !== undefined ? { retry_in_ms: nextIn } : {}),
    });
    return outcome;
  }
}
