import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, makeTestApp } from "../helpers/context.ts";
import { type Family, parseExposition, sampleValue } from "./parse.ts";

/** A sample's value; NaN when absent (so every comparison below fails). */
const value = (f: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  sampleValue(f, name, labels) ?? Number.NaN;

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Keeps the event loop busy for `ms` (nothing else can run meanwhile, timers included). */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy on purpose
  }
}

async function setup() {
  const t = await makeTestApp();
  // makeTestApp starts no server; src/app/start.ts starts the monitor the same way.
  t.ctx.metrics.eventLoopLag.start();
  stops.push(() => t.ctx.metrics.eventLoopLag.stop());
  const scrape = async () => {
    const res = await t.request("/metrics", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
  return { scrape };
}

describe("event-loop lag in /metrics", () => {
  test("the max since the last scrape reports a loop blocked for 100 ms, then resets", async () => {
    const { scrape } = await setup();
    const over50 = (f: Map<string, Family>) =>
      value(f, "gengate_event_loop_lag_seconds_bucket", { le: "+Inf" }) -
      value(f, "gengate_event_loop_lag_seconds_bucket", { le: "0.05" });
    // A first scrape compiles and prepares what a scrape runs (a late tick of its own); the second,
    // after an idle pause, starts the window below with the max reset.
    await scrape();
    await Bun.sleep(50);
    const idle = await scrape();
    expect(idle.get("gengate_event_loop_lag_max_seconds")?.type).toBe("gauge");
    expect(idle.get("gengate_event_loop_lag_seconds")?.type).toBe("histogram");
    expect(value(idle, "gengate_event_loop_lag_seconds_count")).toBeGreaterThan(0);

    block(100);
    await Bun.sleep(30); // the late tick runs once the loop is free
    const after = await scrape();
    const max = value(after, "gengate_event_loop_lag_max_seconds");
    expect(Number.isFinite(max)).toBe(true);
    expect(max).toBeGreaterThanOrEqual(0.05);
    // The histogram counted the late tick above 50 ms.
    expect(over50(after) - over50(idle)).toBeGreaterThanOrEqual(1);

    // That scrape reset the max: the next one, right after it, no longer reports the stall.
    const again = await scrape();
    expect(value(again, "gengate_event_loop_lag_max_seconds")).toBeLessThan(0.05);
    expect(over50(again)).toBe(over50(after));
  });

  test("a monitor that was never started reports no ticks and a max of 0", async () => {
    const t = await makeTestApp();
    const res = await t.request("/metrics", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const f = parseExposition(await res.text());
    expect(value(f, "gengate_event_loop_lag_seconds_count")).toBe(0);
    expect(value(f, "gengate_event_loop_lag_max_seconds")).toBe(0);
  });
});
