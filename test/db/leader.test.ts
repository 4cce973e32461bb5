import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type Leadership, LocalLeadership, leadershipKey, PostgresLeadership } from "../../src/db/leader.ts";
import { MIGRATION_LOCK_KEY } from "../../src/db/migrate-postgres.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { setLogSink } from "../../src/lib/log.ts";
import { until } from "../helpers/instances.ts";
import { createTestDatabase, dialects } from "../helpers/postgres.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

// Leadership (src/db/leader.ts). Liveness bounds are generous; the hand-over times printed are what
// was measured, not asserted.

const BOUND = 20_000;

describe("LocalLeadership (SQLite: one instance)", () => {
  test("leads every name; a second run of a name while one is going is skipped; close aborts and waits", async () => {
    const leadership: Leadership = new LocalLeadership();
    expect(leadership.isLeader("sweep")).toBe(false); // never campaigned for
    const changes: string[] = [];
    leadership.onChange((name, leading) => changes.push(`${name}:${leading}`));
    expect(await leadership.run("sweep", () => {})).toBe(true);
    expect(leadership.isLeader("sweep")).toBe(true);
    expect(await leadership.campaign("other")).toBe(true);

    let release: () => void = () => {};
    let seen: AbortSignal | null = null;
    const long = leadership.run("sweep", async (signal) => {
      seen = signal;
      await new Promise<void>((resolve) => {
        release = resolve;
        signal.addEventListener("abort", () => resolve());
      });
    });
    expect(await leadership.run("sweep", () => {})).toBe(false); // still running
    expect(await leadership.run("other", () => {})).toBe(true); // names are independent
    await expect(leadership.run("boom", () => Promise.reject(new Error("sweep failed")))).rejects.toThrow(
      "sweep failed",
    );
    expect(await leadership.run("boom", () => {})).toBe(true); // a failed run does not block the next

    const closing = leadership.close();
    expect(seen!.aborted).toBe(true);
    await closing;
    expect(await long).toBe(true);
    release();
    expect(leadership.isLeader("sweep")).toBe(false);
    expect(await leadership.run("sweep", () => {})).toBe(false);
    expect(changes).toEqual([
      "sweep:true",
      "other:true",
      "boom:true",
      "sweep:false",
      "other:false",
      "boom:false",
    ]);
  });
});

const pgOnly = dialects().filter((d) => d === "postgres");

describe.each(pgOnly)("PostgresLeadership in one process (%s)", () => {
  test("one leader per name; the follower skips; losing the session ends the term at once; close hands over", async () => {
    const db = await createTestDatabase();
    const sql = PostgresSql.connect({ url: db.url, password: null });
    const settings = { url: db.url, password: null };
    const a = new PostgresLeadership({ settings, retryMs: 200, instance: "a" });
    const b = new PostgresLeadership({ settings, retryMs: 200, instance: "b" });
    try {
      expect(await PostgresLeadership.holder(sql, "sweep")).toBeNull();
      expect(await a.campaign("sweep")).toBe(true);
      expect(await b.campaign("sweep")).toBe(false);
      expect(await PostgresLeadership.holder(sql, "sweep")).toBe("gengate-leader a");
      let ran = 0;
      expect(await b.run("sweep", () => ran++)).toBe(false);
      expect(await a.run("sweep", () => ran++)).toBe(true);
      expect(ran).toBe(1);
      // Names are independent: b leads one a never asked for; a cannot take it.
      expect(await b.campaign("purge")).toBe(true);
      expect(await a.campaign("purge")).toBe(false);
      await Bun.sleep(500); // several rounds: nothing changes while both sessions live
      expect([a.isLeader("sweep"), b.isLeader("sweep"), a.isLeader("purge"), b.isLeader("purge")]).toEqual([
        true,
        false,
        false,
        true,
      ]);

      // The server ends a's session (as when its connection breaks): a stops leading without
      // waiting for a round, its running work sees the abort, and b takes "sweep" over.
      let signal: AbortSignal | null = null;
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const aChanges: string[] = [];
      a.onChange((name, leading) => aChanges.push(`${name}:${leading}`));
      const work = a.run("sweep", async (s) => {
        signal = s;
        started();
        await new Promise((resolve) => s.addEventListener("abort", resolve));
      });
      await running;
      const t0 = performance.now();
      await sql.run(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gengate-leader a'",
      );
      await until(() => aChanges.includes("sweep:false"), BOUND, "a noticing its session ended");
      expect(signal!.aborted).toBe(true);
      expect(await work).toBe(true);
      // a campaigns again on a new session, racing b: whichever tries first leads, never both.
      await until(() => a.isLeader("sweep") || b.isLeader("sweep"), BOUND, "a leader again");
      console.log(
        `leadership taken again ${(performance.now() - t0).toFixed(0)} ms after pg_terminate_backend (retry 200 ms)`,
      );
      await Bun.sleep(600);
      const [leader, follower] = a.isLeader("sweep") ? [a, b] : [b, a];
      expect(follower.isLeader("sweep")).toBe(false);
      expect(await PostgresLeadership.holder(sql, "sweep")).toBe(
        `gengate-leader ${leader === a ? "a" : "b"}`,
      );
      expect(a.isLeader("purge")).toBe(false);
      expect(b.isLeader("purge")).toBe(true);

      // A graceful close gives the names up at once; the other instance takes them.
      await leader.close();
      await until(
        () => follower.isLeader("sweep") && follower.isLeader("purge"),
        BOUND,
        "the follower taking over after the leader's close",
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
      await sql.close();
      await db.drop();
    }
  });

  test("a leader cut off from the server (a stalled connection) steps down after its check times out", async () => {
    const db = await createTestDatabase();
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(db.url).port));
    const logged: string[] = [];
    const restoreSink = setLogSink((line) => logged.push(line));
    const a = new PostgresLeadership({
      settings: { url: proxy.url(db.url), password: null },
      retryMs: 200,
      checkTimeoutMs: 500,
      instance: "a",
    });
    const b = new PostgresLeadership({
      settings: { url: db.url, password: null },
      retryMs: 200,
      instance: "b",
    });
    try {
      expect(await a.campaign("sweep")).toBe(true);
      expect(await b.campaign("sweep")).toBe(false);
      proxy.stall(); // the server still sees a's session (and its lock); a hears nothing back
      await until(() => !a.isLeader("sweep"), BOUND, "a stepping down");
      expect(
        logged.some((l) => l.includes("leadership: session lost") && l.includes("took over 500 ms")),
      ).toBe(true);
      // a closed its side, which ends the stalled session: the lock is free for b.
      await until(() => b.isLeader("sweep"), BOUND, "b taking over");
      expect(a.isLeader("sweep")).toBe(false);
    } finally {
      setLogSink(restoreSink);
      await Promise.all([a.close(), b.close()]);
      await proxy.close();
      await db.drop();
    }
  });

  test("lock keys are stable, signed 64-bit, and apart from the migration lock", () => {
    expect(leadershipKey("queue-sweep")).toBe(leadershipKey("queue-sweep"));
    expect(leadershipKey("queue-sweep")).not.toBe(leadershipKey("retention-sweep"));
    const k = leadershipKey("queue-sweep");
    expect(k >= -(2n ** 63n) && k < 2n ** 63n).toBe(true);
    expect(k).not.toBe(MIGRATION_LOCK_KEY);
  });
});

interface Worker {
  label: string;
  proc: ReturnType<typeof Bun.spawn>;
  lines: { at: number; text: string }[];
}

function spawnWorker(url: string, label: string): Worker {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "leader-worker.ts"), url, label, "sweep"], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const w: Worker = { label, proc, lines: [] };
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        w.lines.push({ at: performance.now(), text: buf.slice(0, nl) });
        buf = buf.slice(nl + 1);
      }
    }
  })();
  return w;
}

const said = (w: Worker, text: string) => w.lines.some((l) => l.text === text);
const leadsNow = (w: Worker) =>
  w.lines
    .filter((l) => /^(LEAD|LOST) /.test(l.text))
    .at(-1)
    ?.text.startsWith("LEAD");

describe.each(pgOnly)("PostgresLeadership across processes (%s)", () => {
  test("three processes: one leads; kill -9 hands over, a restarted one follows, SIGTERM hands over; runs never overlap", async () => {
    const db = await createTestDatabase();
    const sql = PostgresSql.connect({ url: db.url, password: null });
    await sql.run(
      "CREATE TABLE leader_runs (worker TEXT NOT NULL, started_us BIGINT NOT NULL, ended_us BIGINT NOT NULL)",
    );
    const workers = ["w1", "w2", "w3"].map((l) => spawnWorker(db.url, l));
    const handovers: number[] = [];
    const alive = () => workers.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null);
    /** The one live worker that says it leads, once it has recorded work. */
    const leader = async (): Promise<Worker> => {
      await until(() => alive().filter((w) => leadsNow(w)).length === 1, BOUND, "exactly one leader");
      const w = alive().find((w) => leadsNow(w))!;
      for (const deadline = Date.now() + BOUND; ; await Bun.sleep(20)) {
        const row = await sql.get<{ n: bigint }>("SELECT count(*) AS n FROM leader_runs WHERE worker = ?", [
          w.label,
        ]);
        if (row!.n > 0n) return w;
        if (Date.now() > deadline) throw new Error(`${w.label} leads but recorded no work`);
      }
    };
    try {
      for (const w of workers) await until(() => said(w, `READY ${w.label}`), BOUND, `${w.label} started`);
      let current = await leader();
      expect(await PostgresLeadership.holder(sql, "sweep")).toBe(`gengate-leader ${current.label}`);

      // Twice: kill -9 the leader; one of the others takes over.
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        current.proc.kill("SIGKILL");
        await current.proc.exited;
        const next = await leader();
        const took = next.lines.find((l) => l.text === `LEAD ${next.label}` && l.at >= t0)!;
        handovers.push(took.at - t0);
        expect(next.label).not.toBe(current.label);
        current = next;
      }

      // A restarted instance joins as a follower: the leader keeps its name.
      const restarted = spawnWorker(db.url, "w4");
      workers.push(restarted);
      await until(() => said(restarted, "READY w4"), BOUND, "w4 started");
      await Bun.sleep(5_000); // two of its rounds
      expect(leadsNow(restarted)).toBeFalsy();
      expect(await PostgresLeadership.holder(sql, "sweep")).toBe(`gengate-leader ${current.label}`);

      // A graceful stop gives the name up at once; the restarted one takes it.
      const t1 = performance.now();
      current.proc.kill("SIGTERM");
      expect(await current.proc.exited).toBe(0);
      expect((await leader()).label).toBe("w4");
      const graceful = restarted.lines.find((l) => l.text === "LEAD w4")!.at - t1;
      console.log(
        `leadership hand-over after kill -9 (retry 2 s): ${handovers.map((ms) => `${ms.toFixed(0)} ms`).join(", ")}; after SIGTERM: ${graceful.toFixed(0)} ms`,
      );

      // Mutual exclusion: no two workers' recorded runs overlap in the database's clock.
      const runs = await sql.all<{ worker: string; started_us: bigint; ended_us: bigint }>(
        "SELECT worker, started_us, ended_us FROM leader_runs ORDER BY started_us",
      );
      const byWorker = new Set(runs.map((r) => r.worker));
      expect([...byWorker].sort()).toEqual(["w1", "w2", "w3", "w4"]); // every leader did work
      for (let i = 1; i < runs.length; i++) {
        if (runs[i]!.worker !== runs[i - 1]!.worker)
          expect(runs[i - 1]!.ended_us).toBeLessThanOrEqual(runs[i]!.started_us);
      }
    } finally {
      for (const w of workers) w.proc.kill("SIGKILL");
      await Promise.all(workers.map((w) => w.proc.exited));
      await sql.close();
      await db.drop();
    }
  });
});
