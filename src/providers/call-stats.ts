/**
 * A provider's recent calls, in memory on each instance (not shared, reset at start): the outcome and
 * duration of each of the last MAX_CALLS calls inside the last WINDOW_MS, for the operator's health
 * figures (GET /admin/v1/providers, the console's providers page, /metrics). Bounded: at most
 * MAX_CALLS entries per provider (16 bytes each in two typed rings), whatever the traffic.
 */
export const WINDOW_MS = 15 * 60_000;
export const MAX_CALLS = 1000;

export interface CallStatsView {
  /** Calls that ended in the window (at most MAX_CALLS). */
  recent_calls: number;
  /** Of those, the upstream's failures (what feeds the circuit; refused inputs are answers). */
  recent_errors: number;
  /** recent_errors / recent_calls; null without calls. */
  error_rate: number | null;
  /** The median duration of those calls, in ms; null without calls. */
  latency_p50_ms: number | null;
}

export class CallStats {
  private readonly at = new Float64Array(MAX_CALLS);
  /** Duration in ms, negative for a failure (a duration is never negative). */
  private readonly ms = new Float64Array(MAX_CALLS);
  private next = 0;
  private size = 0;

  constructor(private readonly now: () => number = Date.now) {}

  record(ok: boolean, durationMs: number): void {
    this.at[this.next] = this.now();
    this.ms[this.next] = ok ? Math.max(0, durationMs) : -Math.max(0, durationMs) - 1;
    this.next = (this.next + 1) % MAX_CALLS;
    if (this.size < MAX_CALLS) this.size++;
  }

  view(): CallStatsView {
    const since = this.now() - WINDOW_MS;
    const durations: number[] = [];
    let errors = 0;
    for (let i = 0; i < this.size; i++) {
      if (this.at[i]! < since) continue;
      const m = this.ms[i]!;
      if (m < 0) errors++;
      durations.push(m < 0 ? -m - 1 : m);
    }
    const n = durations.length;
    if (n === 0) return { recent_calls: 0, recent_errors: 0, error_rate: null, latency_p50_ms: null };
    durations.sort((a, b) => a - b);
    // The median: the middle one, or the mean of the two middle ones.
    const p50 = n % 2 ? durations[(n - 1) / 2]! : (durations[n / 2 - 1]! + durations[n / 2]!) / 2;
    return {
      recent_calls: n,
      recent_errors: errors,
      error_rate: errors / n,
      latency_p50_ms: Math.round(p50),
    };
  }
}
