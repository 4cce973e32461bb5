import { stringifyWithBigints } from "../lib/json.ts";
import { errorFields, log } from "../lib/log.ts";
import { DEFAULT_TIMEOUT_MS, postPinned } from "./deliver.ts";
import type { ClaimedDelivery, WebhookOutbox } from "./outbox.ts";
import type { WebhookSecretStore } from "./secrets.ts";
import { signWebhook } from "./signing.ts";
import type { Resolver, WebhookPolicy } from "./url-policy.ts";

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
  renderRecord: (requestId: string) => unknown | null;
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
  private readonly maxSleepMs: number;
  private readonly stopTimeoutMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly deps: DispatcherDeps) {
    this.now = deps.now ?? Date.now;
    this.schedule = deps.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.post = deps.post ?? postPinned;
    this.concurrency = Math.max(1, deps.concurrency ?? 4);
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.leaseMs = deps.leaseMs ?? this.timeoutMs + 45_000;
    this.maxSleepMs = deps.maxSleepMs ?? 30_000;
    this.stopTimeoutMs = deps.stopTimeoutMs ?? this.timeoutMs + 5_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.pump();
  }

  /** Look for due deliveries now (call after an enqueue commits). */
  wake(): void {
    if (this.running) this.sleep(0);
  }

  /** Stops claiming; waits (bounded) for attempts in flight to record their outcome. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight.size === 0) return;
    let bound: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((r) => {
        bound = setTimeout(r, this.stopTimeoutMs);
      }),
    ]);
    clearTimeout(bound);
  }

  /**
   * One pass without the loop: claims what is due (up to `concurrency`) and waits for those
   * attempts. For tests and one-shot tools; returns how many attempts were made.
   */
  async runDue(): Promise<number> {
    const claimed = this.deps.outbox.claimDue(this.now(), this.concurrency, this.leaseMs);
    await Promise.all(claimed.map((c) => this.attempt(c)));
    return claimed.length;
  }

  private sleep(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, ms);
    // The loop alone must not keep a process (CLI, tests) alive; the server's socket does.
    this.timer.unref?.();
  }

  private pump(): void {
    if (!this.running) return;
    const free = this.concurrency - this.inFlight.size;
    let claimed: ClaimedDelivery[] = [];
    try {
      claimed = this.deps.outbox.claimDue(this.now(), free, this.leaseMs);
    } catch (err) {
      // E.g. SQLITE_BUSY under a long operator transaction: try again shortly.
      log("warn", "webhook claim failed", errorFields(err));
      this.sleep(1000);
      return;
    }
    for (const c of claimed) this.launch(c);
    // Full: each finished attempt pumps again, no timer needed.
    if (this.inFlight.size >= this.concurrency) return;
    const next = this.deps.outbox.nextDueAt();
    let delay = next === null ? this.maxSleepMs : Math.min(Math.max(next - this.now(), 0), this.maxSleepMs);
    // Nothing was claimed yet something looks due (clock skew between callers): no hot loop.
    if (claimed.length === 0 && delay === 0) delay = 50;
    this.sleep(delay);
  }

  private launch(c: ClaimedDelivery): void {
    const p: Promise<void> = this.attempt(c)
      .then(() => undefined)
      .catch((err) => log("error", "webhook attempt crashed", { webhook_id: c.id, ...errorFields(err) }))
      .finally(() => {
        this.inFlight.delete(p);
        this.pump();
      });
    this.inFlight.add(p);
  }

  /** One attempt: render, sign, post, record. Never throws for receiver or network problems. */
  private async attempt(c: ClaimedDelivery): Promise<AttemptOutcome> {
    const attempt = c.attempts + 1;
    let status: number | null = null;
    let error: string | null = null;
    let gone = false;
    try {
      // An account-level event carries its body; a request's record is rendered now (current).
      const record = c.payload ?? (c.requestId === null ? null : this.deps.renderRecord(c.requestId));
      if (record === null || record === undefined) {
        gone = true;
      } else {
        const body = typeof record === "string" && c.payload !== null ? record : stringifyWithBigints(record);
        const timestamp = Math.floor(this.now() / 1000);
        // During a rotation overlap both secrets sign; receivers accept either (Standard Webhooks).
        const signature = this.deps.secrets
          .signingSecrets(c.accountId)
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
      recorded = this.deps.outbox.markFailed(c, now, null, "the request record no longer exists");
    } else if (status !== null && status >= 200 && status <= 299) {
      outcome = "delivered";
      recorded = this.deps.outbox.markDelivered(c, now, status);
    } else if (status === 410) {
      // 410 Gone: the receiver says this endpoint is retired; retrying would be pestering.
      outcome = "failed";
      recorded = this.deps.outbox.markFailed(c, now, status, "HTTP 410: the receiver asked to stop");
    } else if (attempt > this.schedule.length) {
      outcome = "failed";
      recorded = this.deps.outbox.markFailed(c, now, status, `gave up after ${attempt} attempts: ${error}`);
    } else {
      outcome = "retry";
      nextIn = this.schedule[attempt - 1]!;
      recorded = this.deps.outbox.markRetry(c, now, status, error, now + nextIn);
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
