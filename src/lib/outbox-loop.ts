import { errorFields, log } from "./log.ts";

export interface OutboxLoopOptions<T> {
  /** Names the loop in log lines ("webhook", "mail"). */
  name: string;
  /** Attempts in flight at once. */
  concurrency: number;
  /** Longest sleep between scans, so rows written by other processes are found. */
  maxSleepMs: number;
  /** How long stop() waits for attempts in flight. */
  stopTimeoutMs: number;
  now: () => number;
  /** Leases up to `limit` due rows (one statement, so no two loops take the same row). */
  claim(limit: number): Promise<T[]>;
  /** Earliest due time of a pending row (leases included), or null. */
  nextDueAt(): Promise<number | null>;
  /** One attempt, recording its own outcome; a rejection is logged, never thrown. */
  attempt(item: T): Promise<unknown>;
  /** The row's id, for the log line of an attempt that crashed. */
  idOf(item: T): string;
}

/**
 * The loop of a durable outbox (the webhook dispatcher, the mail sender): claim due rows (at most
 * `concurrency` in flight), run an attempt for each, then sleep until the next due time (capped,
 * so rows from other processes are found). `wake()` after an enqueue starts at once; `stop()`
 * stops claiming and waits (bounded) for attempts in flight. The timers never keep a process alive.
 */
export class OutboxLoop<T> {
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private pumping = false;
  private pumpAgain = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly o: OutboxLoopOptions<T>) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.pump();
  }

  /** Look now. Wake-ups come after the commit of the row they announce (bus `publishAfterCommit`). */
  wake(): void {
    if (!this.running) return;
    this.sleep(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight.size === 0) return;
    let bound: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((r) => {
        bound = setTimeout(r, this.o.stopTimeoutMs);
      }),
    ]);
    clearTimeout(bound);
  }

  private sleep(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      this.timer = null;
      await this.pump();
    }, ms);
    // The loop alone must not keep a process (CLI, tests) alive; the server's socket does.
    this.timer.unref?.();
  }

  /**
   * One pump at a time: the claim is async, and two pumps computing their limit from the same
   * in-flight count would overshoot `concurrency`. A pump asked for meanwhile runs right after.
   */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        await this.pumpOnce();
      } while (this.pumpAgain && this.running);
    } finally {
      this.pumping = false;
    }
  }

  private async pumpOnce(): Promise<void> {
    if (!this.running) return;
    let claimed: T[] = [];
    let next: number | null;
    try {
      claimed = await this.o.claim(this.o.concurrency - this.inFlight.size);
      next = await this.o.nextDueAt();
    } catch (err) {
      // E.g. SQLITE_BUSY under a long operator transaction: try again shortly.
      log("warn", `${this.o.name} claim failed`, errorFields(err));
      this.sleep(1000);
      return;
    }
    for (const item of claimed) this.launch(item);
    // Full: each finished attempt pumps again, no timer needed.
    if (this.inFlight.size >= this.o.concurrency) return;
    const now = this.o.now();
    let delay = next === null ? this.o.maxSleepMs : Math.min(Math.max(next - now, 0), this.o.maxSleepMs);
    // Nothing was claimed yet something looks due (clock skew between callers): no hot loop.
    if (claimed.length === 0 && delay === 0) delay = 50;
    this.sleep(delay);
  }

  private launch(item: T): void {
    const p: Promise<void> = this.o
      .attempt(item)
      .then(() => undefined)
      .catch((err) =>
        log("error", `${this.o.name} attempt crashed`, {
          [`${this.o.name}_id`]: this.o.idOf(item),
          ...errorFields(err),
        }),
      )
      .finally(async () => {
        this.inFlight.delete(p);
        await this.pump();
      });
    this.inFlight.add(p);
  }
}
