import { afterEach, describe, expect, test } from "bun:test";
import { instanceName, runSweep, SWEEPS, type Sweep, startBackground } from "../../src/app/background.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { LocalBus } from "../../src/db/bus.ts";
import type { Provider, ProviderJob } from "../../src/providers/types.ts";
import { JOBS_CHANGED } from "../../src/queue/events.ts";
import { recoverJobs } from "../../src/queue/recovery.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { pollUntil } from "../helpers/api.ts";
import { type AppInstance, type AppInstances, openAppInstances } from "../helpers/app-instances.ts";
import { json, testWorkerPool } from "../helpers/context.ts";
import { until } from "../helpers/instances.ts";
import { dialects } from "../helpers/postgres.ts";

/**
 * Jobs across instances (docs/scale-out.md "Across instances"): a waiter on one instance hears a
 * job finished by another instance's worker through the bus (PostgreSQL), or, when the hint is
 * lost (a bus that hears nobody; SQLite's in-process bus), through its 1 s poll.
 */

/** A provider that finishes a job when the test opens its gate. */
class GatedProvider implements Provider {
  readonly name = "sandbox";
  started: string[] = [];
  private open!: () => void;
  private readonly gate = new Promise<void>((r) => {
    this.open = r;
  });
  resumable() {
    return false;
  }
  release() {
    this.open();
  }
  async run(job: ProviderJob) {
    this.started.push(job.id);
    await this.gate;
    return {
      outputs: [
        {
          kind: "image" as const,
          contentType: "image/png",
          bytes: new Uint8Array([1, 2, 3]),
          width: 1,
          height: 1,
        },
      ],
    };
  }
}

let opened: AppInstances | null = null;
const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.stop(1000)));
  await opened?.close();
  opened = null;
});

async function setup(dialect: "sqlite" | "postgres", config?: ConfigFile) {
  const apps = await openAppInstances(dialect, config);
  opened = apps;
  const a = apps.first;
  const b = await apps.add();
  await a.ctx.ledger.topUp(apps.accountId, 100_000_000n, null);
  return { apps, a, b };
}

/** B runs the jobs: a gated provider and a worker pool on B only. */
function workOn(b: AppInstance): GatedProvider {
  const provider = new GatedProvider();
  b.ctx.providers.set("sandbox", provider);
  pools.push(testWorkerPool(b.ctx));
  return provider;
}

async function submit(on: AppInstance): Promise<string> {
  const res = await on.request("/v1/queue/sandbox/image", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "x" }),
  });
  expect(res.status).toBe(202);
  return (await json<{ request_id: string }>(res)).request_id;
}

describe.each(dialects())("jobs across instances (%s)", (dialect) => {
  test("/run on A returns when B's worker completes the job", async () => {
    const { a, b } = await setup(dialect);
    const provider = workOn(b);
    const heard: string[] = [];
    a.ctx.bus.subscribe(JOBS_CHANGED, (id) => heard.push(id));
    const run = a.request("/v1/run/sandbox/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x" }),
    });
    await until(() => provider.started.length === 1, 15_000, "B's worker started the job");
    const id = provider.started[0]!;
    const t0 = performance.now();
    provider.release();
    const res = await run;
    const ms = performance.now() - t0;
    expect(res.status).toBe(200);
    expect((await a.ctx.jobs.get(id))!.status).toBe("COMPLETED");
    if (dialect === "postgres") {
      // The hint from B reached A (the poll alone would also have ended the wait).
      expect(heard).toContain(id);
    } else {
      // SQLite's in-process buses do not talk: the 1 s poll ended it.
      expect(heard).not.toContain(id);
    }
    console.log(`[${dialect}] /run on A returned ${ms.toFixed(0)} ms after B's provider finished`);
  });

  test("a wait on A still ends by its poll when every hint is lost", async () => {
    const { apps, b } = await setup(dialect);
    // A third instance whose bus hears nobody (and tells nobody).
    const deaf = await apps.add({ bus: new LocalBus() });
    const provider = workOn(b);
    const id = await submit(deaf);
    await until(() => provider.started.length === 1, 15_000, "B's worker started the job");
    const waiting = waitForFinal(deaf.ctx, id, 20_000);
    const t0 = performance.now();
    provider.release();
    const job = await waiting;
    const ms = performance.now() - t0;
    expect(job.status).toBe("COMPLETED");
    // A liveness bound, not a speed claim: the poll re-reads every second.
    expect(ms).toBeLessThan(10_000);
    console.log(`[${dialect}] wait without hints ended ${ms.toFixed(0)} ms after the job finished`);
  });

  test("a status stream on A sees the job B's worker runs, to its end", async () => {
    const { a, b } = await setup(dialect);
    const provider = workOn(b);
    const id = await submit(a);
    const res = await a.request(`/v1/requests/${id}/status/stream`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = "";
    const statuses = (): string[] =>
      [...text.matchAll(/"status":"([A-Z_]+)"/g)].map((m) => m[1]!).filter((s, i, all) => all[i - 1] !== s);
    const readUntil = async (pred: () => boolean) => {
      const deadline = Date.now() + 15_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`stream: ${text}`);
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value);
      }
    };
    await readUntil(() => statuses().includes("IN_PROGRESS"));
    await until(() => provider.started.length === 1, 15_000, "B's worker started the job");
    provider.release();
    await readUntil(() => statuses().includes("COMPLETED"));
    expect(statuses().at(-1)).toBe("COMPLETED");
    // The stream closes after the final state.
    expect((await reader.read()).done).toBe(true);
  });
});

describe.each(dialects().filter((d) => d === "postgres"))(
  "sweeps and recovery across instances (%s)",
  (dialect) => {
    test("each sweep runs on one instance at a time, under its name", async () => {
      expect(SWEEPS.map((s) => s.name)).toEqual([
        "queue-sweep",
        "idempotency-purge",
        "retention-sweep",
        "request-retention",
        "ledger-retention",
        "order-expiry",
      ]);
      const { a, b } = await setup(dialect);
      const ran: string[] = [];
      const sweep = (name: string): Sweep => ({
        name,
        cron: "* * * * *",
        run: async (ctx) => {
          ran.push(`${name}@${ctx === a.ctx ? "A" : "B"}`);
          await Bun.sleep(20);
        },
      });
      for (let round = 0; round < 4; round++) {
        const results = await Promise.all([
          runSweep(a.ctx, sweep("queue-sweep")),
          runSweep(b.ctx, sweep("queue-sweep")),
          runSweep(b.ctx, sweep("retention-sweep")),
          runSweep(a.ctx, sweep("retention-sweep")),
        ]);
        // Per name, exactly one of the two instances ran it.
        expect(results[0] !== results[1]).toBe(true);
        expect(results[2] !== results[3]).toBe(true);
      }
      const where = (name: string) => new Set(ran.filter((r) => r.startsWith(`${name}@`)));
      expect(ran.length).toBe(8);
      // The leader of a name stays the leader while it lives.
      expect(where("queue-sweep").size).toBe(1);
      expect(where("retention-sweep").size).toBe(1);
    });

    test("concurrent submits on two instances, workers on both: every job runs once and completes", async () => {
      const { apps, a, b } = await setup(dialect, {
        models: [],
        catalog: { sandbox: true },
        limits: { writes_per_minute: 10_000, in_flight: 1000 },
      } as unknown as ConfigFile);
      const ran = new Map<string, number>();
      for (const on of [a, b]) {
        on.ctx.providers.set("sandbox", {
          name: "sandbox",
          resumable: () => false,
          run: async (job: ProviderJob) => {
            ran.set(job.id, (ran.get(job.id) ?? 0) + 1);
            await Bun.sleep(5);
            return {
              outputs: [
                {
                  kind: "image" as const,
                  contentType: "image/png",
                  bytes: new Uint8Array([1]),
                  width: 1,
                  height: 1,
                },
              ],
            };
          },
        } as Provider);
        pools.push(testWorkerPool(on.ctx));
      }
      const ids = await Promise.all(Array.from({ length: 60 }, (_, i) => submit(i % 2 ? b : a)));
      for (const id of ids) expect((await waitForFinal(a.ctx, id, 30_000)).status).toBe("COMPLETED");
      expect([...ran.values()].every((n) => n === 1)).toBe(true);
      expect(ran.size).toBe(60);
      const seqs = await Promise.all(ids.map(async (id) => (await a.ctx.jobs.get(id))!.seq));
      expect(new Set(seqs).size).toBe(60);
      const { checkInvariants } = await import("../ledger/ledger-helpers.ts");
      expect(await checkInvariants(a.ctx.sql)).toEqual([]);
      expect(apps.accountId).toBeTruthy();
    });

    test("queue positions on A count the jobs queued and cancelled on B (refreshed within about a second)", async () => {
      const { a, b } = await setup(dialect);
      const ids = [await submit(b), await submit(b), await submit(b)];
      const position = async (id: string) =>
        (await json<{ queue_position: number | null }>(await a.request(`/v1/requests/${id}/status`)))
          .queue_position;
      await pollUntil(
        () => position(ids[2]!),
        (p) => p === 2,
        10_000,
      );
      const cancelled = await b.request(`/v1/requests/${ids[0]}/cancel`, { method: "PUT" });
      expect(cancelled.status).toBe(200);
      await pollUntil(
        () => position(ids[2]!),
        (p) => p === 1,
        10_000,
      );
    });

    test("a restarted instance takes back its earlier life's jobs at once (same host and data dir), no one else's", async () => {
      const { a } = await setup(dialect);
      const [one, two] = [await submit(a), await submit(a)];
      const mine = `worker@${instanceName("/var/lib/gengate")}/`;
      const other = `worker@${instanceName("/var/lib/gengate-2")}/`;
      expect(mine).not.toBe(other);
      expect(instanceName(":memory:")).toBeNull();
      const lease = 600_000;
      const claimed = [
        await a.ctx.jobs.claimNext("sandbox", [], `${mine}111-old`, lease, Date.now()),
        await a.ctx.jobs.claimNext("sandbox", [], `${other}222-live`, lease, Date.now()),
      ];
      expect(claimed.map((j) => j!.id).sort()).toEqual([one, two].sort());
      const r = await recoverJobs(a.ctx, a.ctx.providers, Date.now(), false, undefined, [mine]);
      expect(r.requeued + r.failed).toBe(1);
      const byOwner = async (owner: string) =>
        (await a.ctx.jobs.get(claimed.find((j) => j!.lease_owner === owner)!.id))!;
      expect((await byOwner(`${mine}111-old`)).status).not.toBe("IN_PROGRESS");
      expect(await byOwner(`${other}222-live`)).toMatchObject({
        status: "IN_PROGRESS",
        lease_owner: `${other}222-live`,
      });
    });

    test("an instance starting does not take the jobs another live instance is running", async () => {
      const { a, b } = await setup(dialect);
      const provider = workOn(b);
      const id = await submit(a);
      await until(() => provider.started.length === 1, 15_000, "B's worker started the job");
      const before = (await a.ctx.jobs.get(id))!;
      expect(before.status).toBe("IN_PROGRESS");
      // A starts: its recovery (and a queue sweep on A) leave B's live lease alone.
      const background = await startBackground(a.ctx);
      try {
        await runSweep(a.ctx, SWEEPS[0]!);
        const after = (await a.ctx.jobs.get(id))!;
        expect(after).toMatchObject({ status: "IN_PROGRESS", lease_owner: before.lease_owner, attempt: 1n });
        provider.release();
        const done = await waitForFinal(a.ctx, id, 15_000);
        expect(done).toMatchObject({ status: "COMPLETED", attempt: 1n });
      } finally {
        await background.stop(1000);
      }
    });
  },
);
