import { heapStats } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import { type Provider, ProviderError, type ProviderJob } from "../../src/providers/types.ts";
import { pollUntil } from "../helpers/api.ts";
import { json, makeTestApp, testWorkerPool } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";

/** A provider whose behaviour each test scripts. */
class ScriptedProvider implements Provider {
  readonly name = "sandbox";
  running = 0;
  maxRunning = 0;
  constructor(private readonly script: (job: ProviderJob, attempt: number) => Promise<void>) {}
  resumable() {
    return true;
  }
  async run(job: ProviderJob) {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await this.script(job, job.attempt);
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
    } finally {
      this.running--;
    }
  }
}

async function setup(
  provider: Provider,
  models: unknown[] = [],
  modelConcurrency: (m: string) => number | null = () => null,
) {
  const t = await makeTestApp({ models });
  await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
  t.ctx.providers.set("sandbox", provider);
  const pool = testWorkerPool(t.ctx, { modelConcurrency });
  const submit = async (model = "sandbox/image", body: unknown = { prompt: "x" }) =>
    (
      await json<{ request_id: string }>(
        await t.request(`/v1/queue/${model}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      )
    ).request_id;
  const status = async (id: string) => (await t.ctx.jobs.get(id))!.status;
  return { t, pool, submit, status };
}

describe("worker pool", () => {
  test("a capacity error puts the job back in the queue with a back-off, then it completes", async () => {
    const provider = new ScriptedProvider(async (_job, attempt) => {
      if (attempt < 3) throw new ProviderError("capacity", "upstream busy", { retryAfterMs: 30 });
    });
    const { t, pool, submit, status } = await setup(provider);
    const id = await submit();
    await pollUntil(
      async () => status(id),
      (s) => s === "COMPLETED",
    );
    const job = (await t.ctx.jobs.get(id))!;
    expect(job.attempt).toBe(3n);
    expect((await t.ctx.jobLogs.list(id)).filter((l) => l.message.includes("upstream busy")).length).toBe(2);
    expect((await t.ctx.ledger.getHold(job.hold_id))!.status).toBe("settled");
    expect(await checkInvariants(t.ctx.sql)).toEqual([]);
    await pool.stop(1000);
  });

  test("a provider failure fails the job and releases the hold", async () => {
    const { t, pool, submit, status } = await setup(
      new ScriptedProvider(async () => {
        throw new ProviderError("input", "the upstream refused the prompt");
      }),
    );
    const id = await submit();
    await pollUntil(
      async () => status(id),
      (s) => s === "FAILED",
    );
    expect((await t.ctx.jobs.get(id))!.error_message).toBe("the upstream refused the prompt");
    expect((await t.ctx.ledger.getHold((await t.ctx.jobs.get(id))!.hold_id))!.status).toBe("released");
    await pool.stop(1000);
  });

  test("a finished job's signal is aborted: what a provider derived from it (timeouts) is released", async () => {
    const signals: AbortSignal[] = [];
    const provider = new ScriptedProvider(async (job) => {
      signals.push(job.signal);
      // As upstream fetches do: a timeout another signal depends on stays alive until it fires,
      // unless its dependent is aborted first.
      const derived = AbortSignal.any([job.signal, AbortSignal.timeout(3_600_000)]);
      derived.addEventListener("abort", () => {});
    });
    const { pool, submit, status } = await setup(provider);
    const live = () => {
      Bun.gc(true);
      return heapStats().objectTypeCounts.AbortSignal ?? 0;
    };
    const first = await submit();
    await pollUntil(
      async () => status(first),
      (s) => s === "COMPLETED",
    );
    const before = live();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await submit());
    for (const id of ids)
      await pollUntil(
        async () => status(id),
        (s) => s === "COMPLETED",
      );
    await Bun.sleep(20); // the worker's finally runs after the job's final write
    expect(signals.every((s) => s.aborted)).toBe(true);
    signals.length = 0;
    // Before: three per job (the job's, the timeout, the derived one) for an hour.
    expect(live() - before).toBeLessThan(15);
    await pool.stop(1000);
  });

  test("a model's concurrency caps its running jobs; other models still run", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const provider = new ScriptedProvider(async (job) => {
      if (job.model.id === "sandbox/image") await gate;
    });
    const { pool, submit, status } = await setup(provider, [], (m) => (m === "sandbox/image" ? 1 : null));
    const a = await submit();
    const b = await submit();
    const other = await submit("sandbox/speech", { text: "hi", duration: 1 });
    await pollUntil(
      async () => status(other),
      (s) => s === "COMPLETED",
    );
    expect(await status(a)).toBe("IN_PROGRESS");
    expect(await status(b)).toBe("IN_QUEUE");
    release();
    await pollUntil(
      async () => status(b),
      (s) => s === "COMPLETED",
    );
    expect(provider.maxRunning).toBeLessThanOrEqual(2);
    await pool.stop(1000);
  });

  test("a burst is claimed in batches by idle workers: every worker busy, no model over its cap", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const provider = new ScriptedProvider(async (job) => {
      const m = job.model.id;
      running.set(m, (running.get(m) ?? 0) + 1);
      most.set(m, Math.max(most.get(m) ?? 0, running.get(m)!));
      try {
        await gate;
      } finally {
        running.set(m, running.get(m)! - 1);
      }
    });
    // Four workers (testWorkerPool); sandbox/image capped at 2.
    const { pool, submit, status } = await setup(provider, [], (m) => (m === "sandbox/image" ? 2 : null));
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await submit());
    for (let i = 0; i < 3; i++) ids.push(await submit("sandbox/speech", { text: "hi", duration: 1 }));
    await pollUntil(
      async () => provider.running,
      (n) => n === 4,
    );
    release();
    for (const id of ids)
      await pollUntil(
        async () => status(id),
        (s) => s === "COMPLETED",
      );
    expect(most.get("sandbox/image")).toBe(2);
    expect(provider.maxRunning).toBe(4);
    await pool.stop(1000);
  });

  test("a job past its model's time limit is failed and released, the provider call aborted", async () => {
    let aborted = false;
    const provider = new ScriptedProvider(
      (job) =>
        new Promise<void>((_ok, fail) => {
          job.signal.addEventListener("abort", () => {
            aborted = true;
            fail(job.signal.reason);
          });
        }),
    );
    const { t, pool, submit, status } = await setup(provider, [
      { id: "sandbox/image", kind: "image", price_usd_micro: 10, max: 1, time_limit_seconds: 1 },
    ]);
    const id = await submit();
    await pollUntil(
      async () => status(id),
      (s) => s === "FAILED",
      5000,
    );
    expect(aborted).toBe(true);
    expect((await t.ctx.jobs.get(id))!.error_message).toContain("time limit");
    expect((await t.ctx.ledger.getHold((await t.ctx.jobs.get(id))!.hold_id))!.status).toBe("released");
    await pool.stop(1000);
  });
});
