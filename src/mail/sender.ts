import type { SmtpSettings } from "../config/schema.ts";
import { log } from "../lib/log.ts";
import { OutboxLoop } from "../lib/outbox-loop.ts";
import type { ClaimedMail, MailOutbox } from "./outbox.ts";
import { MailSendError, type MailTransport, smtpTransport } from "./transport.ts";

/** Delays before retry 1, 2, ...: 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h; then the message fails. */
/** The bus channel that wakes every instance's mail sender (empty payload; src/db/bus.ts). */
export const MAIL_CHANNEL = "mail";

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
  private readonly transportFor: (s: SmtpSettings) => MailTransport;
  private readonly loop: OutboxLoop<ClaimedMail>;
  private cached: { settings: SmtpSettings; transport: MailTransport } | null = null;
  private lastPurge = 0;

  constructor(private readonly deps: MailSenderDeps) {
    this.now = deps.now ?? Date.now;
    this.schedule = deps.schedule ?? DEFAULT_MAIL_RETRY_MS;
    this.concurrency = Math.max(1, deps.concurrency ?? 2);
    this.leaseMs = deps.leaseMs ?? 120_000;
    this.transportFor = deps.transportFor ?? ((s) => smtpTransport(s));
    this.loop = new OutboxLoop({
      name: "mail",
      concurrency: this.concurrency,
      maxSleepMs: deps.maxSleepMs ?? 30_000,
      stopTimeoutMs: deps.stopTimeoutMs ?? 20_000,
      now: this.now,
      claim: async (limit) => await this.claim(limit),
      // Without [smtp] nothing is claimed: sleep the longest, a reload may add it.
      nextDueAt: async () => (this.deps.settings() ? await this.deps.outbox.nextDueAt() : null),
      attempt: (c) => this.attempt(c),
      idOf: (c) => c.id,
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
  }

  /** Look for due messages now (after an enqueue commits). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops claiming; waits (bounded) for sends in flight to record their outcome; closes the transport. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.cached?.transport.close();
    this.cached = null;
  }

  /** One pass without the loop (tests, tools): sends what is due now; returns how many were tried. */
  async runDue(): Promise<number> {
    const claimed = await this.claim(this.concurrency);
    await Promise.all(claimed.map((c) => this.attempt(c)));
    return claimed.length;
  }

  private async claim(limit: number): Promise<ClaimedMail[]> {
    if (this.now() - this.lastPurge > 3_600_000) {
      this.lastPurge = this.now();
      await this.deps.outbox.purgeFinished(this.now() - KEEP_FINISHED_MS);
    }
    if (!this.deps.settings()) return [];
    return await this.deps.outbox.claimDue(this.now(), limit, this.leaseMs);
  }

  /** The transport for the current settings (a reload that changes them makes a new one). */
  private transport(settings: SmtpSettings): MailTransport {
    if (this.cached?.settings !== settings) {
      this.cached?.transport.close();
      this.cached = { settings, transport: this.transportFor(settings) };
    }
    return this.cached.transport;
  }

  private async attempt(c: ClaimedMail): Promise<MailOutcome> {
    const attempt = c.attempts + 1;
    let error: string | null = null;
    let permanent = false;
    try {
      const settings = this.deps.settings();
      if (!settings) throw new Error("[smtp] is no longer configured");
      await this.transport(settings).send(settings.from, c.to, c);
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
      recorded = await this.deps.outbox.markSent(c, now);
    } else if (permanent) {
      outcome = "failed";
      recorded = await this.deps.outbox.markFailed(c, now, `refused by the mail server: ${error}`);
    } else if (attempt > this.schedule.length) {
      outcome = "failed";
      recorded = await this.deps.outbox.markFailed(c, now, `gave up after ${attempt} attempts: ${error}`);
    } else {
      outcome = "retry";
      nextIn = this.schedule[attempt - 1]!;
      recorded = await this.deps.outbox.markRetry(c, now, error, now + nextIn);
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
