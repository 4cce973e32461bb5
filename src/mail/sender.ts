import type { SmtpSettings } from "../config/schema.ts";
import { errorFields, log } from "../lib/log.ts";
import type { ClaimedMail, MailOutbox } from "./outbox.ts";
import { MailSendError, type MailTransport, smtpTransport } from "./transport.ts";

/** Delays before retry 1, 2, ...: 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h; then the message fails. */
export const DEFAULT_MAIL_RETRY_MS: readonly number[] = [
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  3_600_000,
  3 * 3_600_000,
  6 * 3_600_000,
];
/** Finished rows (sent or failed, bodies already emptied) are deleted after this long. */
const KEEP_FINISHED_MS = 30 * 24 * 3_600_000;

export interface MailSenderDeps {
  outbox: MailOutbox;
  /** Read at every pass, so a config reload applies (null: nothing is sent; rows wait). */
  settings: () => SmtpSettings | null;
  /** Default: nodemailer over SMTP (smtpTransport). */
  transportFor?: (s: SmtpSettings) => MailTransport;
  now?: () => number;
  schedule?: readonly number[];
  /** Messages in flight at once. Default 2. */
  concurrency?: number;
  /** How long a claim holds a row; must outlast an attempt. Default 2 min. */
  leaseMs?: number;
  /** Longest sleep between scans (rows queued by operator commands). Default 30 s. */
  maxSleepMs?: number;
  /** How long stop() waits for sends in flight. Default 20 s. */
  stopTimeoutMs?: number;
  onOutcome?: (outcome: MailOutcome) => void;
}

export type MailOutcome = "sent" | "failed" | "retry" | "lost_lease";

/**
 * Sends what the mail outbox owes, like the webhook dispatcher: claim due rows under a lease,
 * send each, record the outcome (sent; retry after the schedule's delay; failed with the reason
 * once the schedule is exhausted or the server refused for good), sleep until the next due time.
 * At least once: a crash between the server's acceptance and the record sends it again.
 */
export class MailSender {
  private readonly now: () => number;
  private readonly schedule: readonly number[];
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly maxSleepMs: number;
  private readonly stopTimeoutMs: number;
  private readonly transportFor: (s: SmtpSettings) => MailTransport;
  private readonly inFlight = new Set<Promise<void>>();
  private cached: { settings: SmtpSettings; transport: MailTransport } | null = null;
  private running = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastPurge = 0;

  constructor(private readonly deps: MailSenderDeps) {
    this.now = deps.now ?? Date.now;
    this.schedule = deps.schedule ?? DEFAULT_MAIL_RETRY_MS;
    this.concurrency = Math.max(1, deps.concurrency ?? 2);
    this.leaseMs = deps.leaseMs ?? 120_000;
    this.maxSleepMs = deps.maxSleepMs ?? 30_000;
    this.stopTimeoutMs = deps.stopTimeoutMs ?? 20_000;
    this.transportFor = deps.transportFor ?? ((s) => smtpTransport(s));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.pump();
  }

  /** Look for due messages now (after an enqueue commits). */
  wake(): void {
    if (this.running) this.sleep(0);
  }

  /** Stops claiming; waits (bounded) for sends in flight to record their outcome; closes the transport. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight.size > 0) {
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...this.inFlight]),
        new Promise((r) => {
          bound = setTimeout(r, this.stopTimeoutMs);
        }),
      ]);
      clearTimeout(bound);
    }
    this.cached?.transport.close();
    this.cached = null;
  }

  /** One pass without the loop (tests, tools): sends what is due now; returns how many were tried. */
  async runDue(): Promise<number> {
    const transport = this.transport();
    if (!transport) return 0;
    const claimed = this.deps.outbox.claimDue(this.now(), this.concurrency, this.leaseMs);
    await Promise.all(claimed.map((c) => this.attempt(c, transport)));
    return claimed.length;
  }

  private transport(): MailTransport | null {
    const settings = this.deps.settings();
    if (!settings) return null;
    if (this.cached?.settings !== settings) {
      this.cached?.transport.close();
      this.cached = { settings, transport: this.transportFor(settings) };
    }
    return this.cached.transport;
  }

  private sleep(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, ms);
    this.timer.unref?.();
  }

  private pump(): void {
    if (!this.running) return;
    let claimed: ClaimedMail[] = [];
    let next: number | null = null;
    const transport = this.transport();
    try {
      if (transport) {
        claimed = this.deps.outbox.claimDue(this.now(), this.concurrency - this.inFlight.size, this.leaseMs);
        next = this.deps.outbox.nextDueAt();
      }
      if (this.now() - this.lastPurge > 3_600_000) {
        this.lastPurge = this.now();
        this.deps.outbox.purgeFinished(this.now() - KEEP_FINISHED_MS);
      }
    } catch (err) {
      log("warn", "mail claim failed", errorFields(err));
      this.sleep(1000);
      return;
    }
    for (const c of claimed) this.launch(c, transport!);
    if (this.inFlight.size >= this.concurrency) return;
    let delay = next === null ? this.maxSleepMs : Math.min(Math.max(next - this.now(), 0), this.maxSleepMs);
    if (claimed.length === 0 && delay === 0) delay = 50;
    this.sleep(delay);
  }

  private launch(c: ClaimedMail, transport: MailTransport): void {
    const p: Promise<void> = this.attempt(c, transport)
      .then(() => undefined)
      .catch((err) => log("error", "mail attempt crashed", { mail_id: c.id, ...errorFields(err) }))
      .finally(() => {
        this.inFlight.delete(p);
        this.pump();
      });
    this.inFlight.add(p);
  }

  private async attempt(c: ClaimedMail, transport: MailTransport): Promise<MailOutcome> {
    const attempt = c.attempts + 1;
    let error: string | null = null;
    let permanent = false;
    try {
      await transport.send(this.deps.settings()?.from ?? "", c.to, c);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      permanent = err instanceof MailSendError && err.permanent;
    }
    const now = this.now();
    let outcome: MailOutcome;
    let recorded: boolean;
    let nextIn: number | undefined;
    if (error === null) {
      outcome = "sent";
      recorded = this.deps.outbox.markSent(c, now);
    } else if (permanent) {
      outcome = "failed";
      recorded = this.deps.outbox.markFailed(c, now, `refused by the mail server: ${error}`);
    } else if (attempt > this.schedule.length) {
      outcome = "failed";
      recorded = this.deps.outbox.markFailed(c, now, `gave up after ${attempt} attempts: ${error}`);
    } else {
      outcome = "retry";
      nextIn = this.schedule[attempt - 1]!;
      recorded = this.deps.outbox.markRetry(c, now, error, now + nextIn);
    }
    if (!recorded) outcome = "lost_lease";
    this.deps.onOutcome?.(outcome);
    // Recipients are not logged (personal data); the operator page shows them.
    log(outcome === "sent" ? "info" : "warn", "mail attempt", {
      mail_id: c.id,
      kind: c.kind,
      attempt,
      outcome,
      ...(error !== null ? { error } : {}),
      ...(nextIn !== undefined ? { retry_in_ms: nextIn } : {}),
    });
    return outcome;
  }
}
