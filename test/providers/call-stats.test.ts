import { describe, expect, test } from "bun:test";
import { CallStats, MAX_CALLS, WINDOW_MS } from "../../src/providers/call-stats.ts";

describe("a provider's recent calls", () => {
  test("error rate and median latency of the calls in the window; none is null", () => {
    let now = 1_000_000;
    const s = new CallStats(() => now);
    expect(s.view()).toEqual({ recent_calls: 0, recent_errors: 0, error_rate: null, latency_p50_ms: null });
    s.record(true, 100);
    s.record(false, 300);
    s.record(true, 200);
    expect(s.view()).toEqual({ recent_calls: 3, recent_errors: 1, error_rate: 1 / 3, latency_p50_ms: 200 });
    s.record(false, 0);
    // Four calls: the mean of the two middle durations (100, 200).
    expect(s.view()).toMatchObject({
      recent_calls: 4,
      recent_errors: 2,
      error_rate: 0.5,
      latency_p50_ms: 150,
    });
    now += WINDOW_MS + 1;
    expect(s.view().recent_calls).toBe(0);
    s.record(true, 7);
    expect(s.view()).toEqual({ recent_calls: 1, recent_errors: 0, error_rate: 0, latency_p50_ms: 7 });
  });

  test("at most MAX_CALLS are kept: the oldest give way", () => {
    const s = new CallStats(() => 0);
    for (let i = 0; i < MAX_CALLS; i++) s.record(false, 1);
    for (let i = 0; i < MAX_CALLS / 2; i++) s.record(true, 1);
    expect(s.view()).toMatchObject({
      recent_calls: MAX_CALLS,
      recent_errors: MAX_CALLS / 2,
      error_rate: 0.5,
    });
  });
});
