import type { ExpositionWriter } from "./exposition.ts";

/** Upper bounds (seconds) of the lag buckets: a timer's usual 0-2 ms up to a 5 s stall. */
export const LAG_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * How long the event loop was kept from running a timer: a 10 ms interval measures, at each tick,
 * how much later than 10 ms after the previous tick it ran. One process serves every request on one
 * thread, so a page that computes for 100 ms delays every other request by as much: this is the
 * figure that shows it. Cost: 100 ticks a second of one clock read, a scan of 11 bounds and a few
 * additions; the timer is unref'd (it never keeps a process alive). perf_hooks'
 * monitorEventLoopDelay is not used: a timer's drift is what a waiting request sees, and it runs the
 * same on every runtime.
 */
export class EventLoopLag {
  /** Per bucket, not cumulative; the last slot counts ticks above the highest bound. */
  private readonly counts = new Float64Array(LAG_BUCKETS.length + 1);
  private sum = 0;
  private maxSinceScrape = 0;
  private last = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(readonly intervalMs = 10) {}

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(performance.now()), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One tick at `now` (ms): its lateness against the interval, in seconds (never negative). */
  tick(now: number): void {
    const lag = Math.max(0, now - this.last - this.intervalMs) / 1000;
    this.last = now;
    let i = 0;
    while (i < LAG_BUCKETS.length && lag > LAG_BUCKETS[i]!) i++;
    this.counts[i]!++;
    this.sum += lag;
    if (lag > this.maxSinceScrape) this.maxSinceScrape = lag;
  }

  /**
   * The histogram (since the start) and the worst tick since the previous scrape, which this
   * scrape then resets (as prom-client's nodejs_eventloop_lag_max_seconds): one scraper sees every
   * stall exactly once, however short its interval.
   */
  write(out: ExpositionWriter): void {
    out.family(
      "gengate_event_loop_lag_seconds",
      "histogram",
      "Lateness of a 10 ms timer at each tick: how long the event loop was kept from serving anything else.",
    );
    out.histogram({}, LAG_BUCKETS, this.counts, this.sum);
    out.family(
      "gengate_event_loop_lag_max_seconds",
      "gauge",
      "The worst lateness of that timer since the previous scrape of this process (each scrape resets it).",
    );
    out.sample(undefined, this.maxSinceScrape);
    this.maxSinceScrape = 0;
  }
}
