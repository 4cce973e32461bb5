import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BusUsageError, MAX_BUS_PAYLOAD_BYTES, PostgresBus, Wakeup } from "../../src/db/bus.ts";
import { setLogSink } from "../../src/lib/log.ts";
import { openInstances, until } from "../helpers/instances.ts";
import { dialects } from "../helpers/postgres.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

// The Bus (src/db/bus.ts): in process on SQLite, LISTEN/NOTIFY on PostgreSQL. Liveness bounds are
// generous (a loaded 2-core machine); the figures printed are what was measured, not asserted.

const BOUND = 15_000;

describe.each(dialects())("Bus on %s: one instance", (dialect) => {
  test("a publish reaches every subscriber of its channel before it returns, in order", async () => {
    const all = await openInstances(dialect, 1);
    try {
      const { bus } = all.list[0]!;
      const a: string[] = [];
      const b: string[] = [];
      const other: string[] = [];
      await Promise.all([
        bus.subscribe("jobs", (p) => a.push(p)).ready,
        bus.subscribe("jobs", (p) => b.push(p)).ready,
        bus.subscribe("cache", (p) => other.push(p)).ready,
      ]);
      await bus.publish("jobs", "j1");
      expect(a).toEqual(["j1"]);
      const pending = bus.publish("jobs", "j2");
      expect(b).toEqual(["j1", "j2"]); // delivered synchronously, before the NOTIFY round trip
      await pending;
      await bus.publish("jobs");
      expect(a).toEqual(["j1", "j2", ""]);
      expect(other).toEqual([]);
    } finally {
      await all.close();
    }
  });

  test("unsubscribing stops that subscriber only; a throwing subscriber is logged, the rest still run", async () => {
    const all = await openInstances(dialect, 1);
    const logged: string[] = [];
    const restoreSink = setLogSink((line) => logged.push(line));
    try {
      const { bus } = all.list[0]!;
      const a: string[] = [];
      const b: string[] = [];
      const stopA = bus.subscribe("jobs", (p) => a.push(p));
      bus.subscribe("jobs", () => {
        throw new Error("subscriber bug");
      });
      bus.subscribe("jobs", (p) => b.push(p));
      await stopA.ready;
      await bus.publish("jobs", "one");
      stopA();
      stopA(); // idempotent
      await bus.publish("jobs", "two");
      expect(a).toEqual(["one"]);
      expect(b).toEqual(["one", "two"]);
      expect(
        logged.filter((l) => l.includes("bus subscriber failed") && l.includes("subscriber bug")),
      ).toHaveLength(2);
    } finally {
      setLogSink(restoreSink);
      await all.close();
    }
  });

  test("payloads are limited to MAX_BUS_PAYLOAD_BYTES UTF-8 bytes and channel names to a short pattern, alike", async () => {
    const all = await openInstances(dialect, 1);
    try {
      const { bus } = all.list[0]!;
      const got: string[] = [];
      await bus.subscribe("jobs", (p) => got.push(p)).ready;
      const largest = "é".repeat(MAX_BUS_PAYLOAD_BYTES / 2); // 2 bytes each
      await bus.publish("jobs", largest);
      expect(got).toEqual([largest]);
      // Thrown at once (not a rejection), so `void bus.publish(...)` cannot hide it.
      expect(() => bus.publish("jobs", `${largest}x`)).toThrow(BusUsageError);
      expect(() => bus.publish("jobs", "x".repeat(MAX_BUS_PAYLOAD_BYTES + 1))).toThrow(/over the limit/);
      for (const bad of ["", "Jobs", "1jobs", "jobs channel", "x".repeat(49), "jobs;drop"]) {
        expect(() => bus.publish(bad, "p")).toThrow(BusUsageError);
        expect(() => bus.subscribe(bad, () => {})).toThrow(BusUsageError);
      }
      expect(got).toHaveLength(1);
    } finally {
      await all.close();
    }
  });

  test("after close nothing is delivered, and publishing or subscribing does nothing", async () => {
    const all = await openInstances(dialect, 1);
    try {
      const { bus } = all.list[0]!;
      const got: string[] = [];
      await bus.subscribe("jobs", (p) => got.push(p)).ready;
      await bus.close();
      await bus.publish("jobs", "late");
      const late = bus.subscribe("jobs", (p) => got.push(p));
      await late.ready;
      late();
      await bus.publish("jobs", "later");
      expect(got).toEqual([]);
    } finally {
      await all.close();
    }
  });
});

describe.each(dialects())("Wakeup on %s", (dialect) => {
  test("a wake-up before the wait is kept; other payloads do not wake; timeouts, aborts and close resolve false", async () => {
    const all = await openInstances(dialect, 1);
    try {
      const { bus } = all.list[0]!;
      const wake = new Wakeup(bus, "jobs.changed", (id) => id === "job_1");
      await wake.ready;
      await bus.publish("jobs.changed", "job_1"); // between the caller's check and its wait
      expect(await wake.wait(BOUND)).toBe(true);
      await bus.publish("jobs.changed", "job_2");
      expect(await wake.wait(30)).toBe(false); // not ours: the poll period ran out
      const waiting = wake.wait(BOUND);
      await bus.publish("jobs.changed", "job_1");
      expect(await waiting).toBe(true);
      const abort = new AbortController();
      const aborted = wake.wait(BOUND, abort.signal);
      abort.abort();
      expect(await aborted).toBe(false);
      expect(await wake.wait(BOUND, abort.signal)).toBe(false);
      const closing = wake.wait(BOUND);
      wake.close();
      expect(await closing).toBe(false);
      await bus.publish("jobs.changed", "job_1");
      expect(await wake.wait(30)).toBe(false); // unsubscribed
    } finally {
      await all.close();
    }
  });
});

const pgOnly = dialects().filter((d) => d === "postgres");

describe.each(pgOnly)("PostgresBus across instances (%s)", (dialect) => {
  let all: Awaited<ReturnType<typeof openInstances>>;
  beforeAll(async () => {
    all = await openInstances(dialect, 3);
  });
  afterAll(async () => {
    await all?.close();
  });

  test("a publish reaches every instance once, in the sender's order; the sender drops its own echo", async () => {
    const [a, b, c] = all.list as [(typeof all.list)[0], (typeof all.list)[0], (typeof all.list)[0]];
    const got = { a: [] as string[], b: [] as string[], c: [] as string[] };
    const subs = [
      a.bus.subscribe("order", (p) => got.a.push(p)),
      b.bus.subscribe("order", (p) => got.b.push(p)),
      c.bus.subscribe("order", (p) => got.c.push(p)),
    ];
    await Promise.all(subs.map((s) => s.ready));
    const sent = Array.from({ length: 50 }, (_, i) => `job_${i}`);
    for (const p of sent) await a.bus.publish("order", p);
    await until(() => got.b.length >= 50 && got.c.length >= 50, BOUND, "50 notifications on b and c");
    // A marker sent after them from b: once a has it, any echo of a's own would have arrived too.
    await b.bus.publish("order", "marker");
    await until(() => got.a.includes("marker") && got.c.includes("marker"), BOUND, "the marker");
    expect(got.a).toEqual([...sent, "marker"]);
    expect(got.b).toEqual([...sent, "marker"]);
    expect(got.c).toEqual([...sent, "marker"]);
    for (const s of subs) s();
  });

  test("the largest payload crosses intact; PostgreSQL itself refuses 8000 bytes", async () => {
    const [a, b] = all.list as [(typeof all.list)[0], (typeof all.list)[0]];
    const got: string[] = [];
    const sub = b.bus.subscribe("large", (p) => got.push(p));
    await sub.ready;
    const largest = `${"ж".repeat((MAX_BUS_PAYLOAD_BYTES - 2) / 2)}ok`;
    expect(Buffer.byteLength(largest)).toBe(MAX_BUS_PAYLOAD_BYTES);
    await a.bus.publish("large", largest);
    await until(() => got.length === 1, BOUND, "the large payload");
    expect(got[0]).toBe(largest);
    await expect(a.sql.run("SELECT pg_notify('gengate.large', ?)", ["x".repeat(8000)])).rejects.toThrow(
      /payload string too long/,
    );
    await a.sql.run("SELECT pg_notify('gengate.large', ?)", ["x".repeat(7999)]); // PostgreSQL's real limit
    sub();
  });

  test("latency between instances (printed, not asserted)", async () => {
    const [a, b] = all.list as [(typeof all.list)[0], (typeof all.list)[0]];
    let arrived: () => void = () => {};
    let received = 0;
    const sub = b.bus.subscribe("ping", () => {
      received++;
      arrived();
    });
    await sub.ready;
    const ms: number[] = [];
    for (let i = 0; i < 200; i++) {
      const arrival = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const t0 = performance.now();
      await a.bus.publish("ping", String(i));
      await Promise.race([
        arrival,
        Bun.sleep(BOUND).then(() => Promise.reject(new Error("a ping was lost"))),
      ]);
      ms.push(performance.now() - t0);
    }
    ms.sort((x, y) => x - y);
    console.log(
      `bus latency across instances over 200 notifications: p50 ${ms[100]!.toFixed(2)} ms, p99 ${ms[198]!.toFixed(2)} ms, max ${ms[199]!.toFixed(2)} ms`,
    );
    expect(received).toBe(200);
    sub();
  });

  test("after the server ends the listening session, the bus listens again, says it may have missed some, and delivers again", async () => {
    const [a, b] = all.list as [(typeof all.list)[0], (typeof all.list)[0]];
    const got: string[] = [];
    let missed = 0;
    const sub = b.bus.subscribe("recover", (p) => got.push(p), { onMaybeMissed: () => missed++ });
    await sub.ready;
    expect(missed).toBe(1); // the first LISTEN: anything published before it was missed
    const killed = await a.sql.all<{ ok: bigint }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
       WHERE application_name = 'gengate-bus' AND datname = current_database() AND query ILIKE 'LISTEN%recover%'`,
    );
    expect(killed.length).toBeGreaterThan(0);
    const t0 = performance.now();
    await until(() => missed === 2, BOUND, "the LISTEN acknowledged again after the session was terminated");
    console.log(`bus listening again ${(performance.now() - t0).toFixed(0)} ms after pg_terminate_backend`);
    await a.bus.publish("recover", "after");
    await until(() => got.includes("after"), BOUND, "delivery after the reconnect");
    sub();
  });

  test("a Wakeup wakes on another instance's publish, and after a reconnect (it may have missed one)", async () => {
    const [a, b] = all.list as [(typeof all.list)[0], (typeof all.list)[0]];
    const wake = new Wakeup(b.bus, "wakeup");
    await wake.ready;
    expect(await wake.wait(BOUND)).toBe(true); // the first LISTEN's maybe-missed
    const waiting = wake.wait(BOUND);
    await a.bus.publish("wakeup", "job_9");
    expect(await waiting).toBe(true);
    const afterReconnect = wake.wait(BOUND);
    await a.sql.run(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'gengate-bus' AND datname = current_database() AND query ILIKE 'LISTEN%wakeup%'`,
    );
    expect(await afterReconnect).toBe(true);
    wake.close();
  });

  test("a first LISTEN that cannot reach the server is retried; a network cut loses hints but onMaybeMissed says so", async () => {
    const [a] = all.list as [(typeof all.list)[0]];
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(all.target).port));
    proxy.down();
    const cut = await all.add({ url: proxy.url(all.target) });
    const logged: string[] = [];
    const restoreSink = setLogSink((line) => logged.push(line));
    try {
      const got: string[] = [];
      let missed = 0;
      let ready = false;
      const sub = cut.bus.subscribe("cut", (p) => got.push(p), { onMaybeMissed: () => missed++ });
      void sub.ready.then(() => {
        ready = true;
      });
      await until(
        () => logged.some((l) => l.includes("LISTEN failed, retrying")),
        BOUND,
        "a failed first LISTEN",
      );
      expect(ready).toBe(false);
      proxy.up();
      await sub.ready;
      expect(missed).toBe(1);
      await a.bus.publish("cut", "through");
      await until(() => got.includes("through"), BOUND, "delivery once the server is reachable");

      // Cut the network and keep it down: what is published meanwhile never arrives...
      proxy.down();
      await a.bus.publish("cut", "lost");
      await Bun.sleep(300);
      // ...but once the bus is back it says it may have missed something (the caller polls).
      proxy.up();
      await until(() => missed === 2, BOUND, "onMaybeMissed after the cut");
      await a.bus.publish("cut", "again");
      await until(() => got.includes("again"), BOUND, "delivery after the cut");
      expect(got).toEqual(["through", "again"]);
      sub();
    } finally {
      setLogSink(restoreSink);
      await proxy.close();
    }
  });

  test("a publish whose NOTIFY cannot be sent is logged, not thrown (it is only a hint)", async () => {
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(all.target).port));
    const inst = await all.add({ url: proxy.url(all.target), connectTimeoutSeconds: 1 });
    const logged: string[] = [];
    const restoreSink = setLogSink((line) => logged.push(line));
    try {
      const local: string[] = [];
      inst.bus.subscribe("down", (p) => local.push(p));
      proxy.down();
      await inst.bus.publish("down", "still local");
      expect(local).toEqual(["still local"]);
      expect(logged.some((l) => l.includes("a notification could not be sent"))).toBe(true);
      expect(inst.bus).toBeInstanceOf(PostgresBus);
    } finally {
      setLogSink(restoreSink);
      proxy.up();
      await proxy.close();
    }
  });
});
