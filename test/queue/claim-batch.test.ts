import { afterEach, describe, expect, test } from "bun:test";
import type { JobRow } from "../../src/queue/job-row.ts";
import { type AppInstance, type AppInstances, openAppInstances } from "../helpers/app-instances.ts";
import { dialects } from "../helpers/postgres.ts";

// Batch claims (JobStore.claimBatch): at most k jobs, in queue order, each model's share bounded
// by its remaining cap, each job with its own lease; and claimers of two instances racing over one
// queue never take a job twice.

let open: AppInstances | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

const LEASE = 600_000;

/** Queues one job per model id given, in that order (one transaction), and returns their ids. */
async function queue(a: AppInstance, accountId: string, models: string[]): Promise<string[]> {
  const ids: string[] = [];
  await a.ctx.sql.tx(async (tx) => {
    for (const model of models) {
      const id = crypto.randomUUID();
      const hold = await a.ctx.ledger.in(tx).reserve({
        accountId,
        keyId: null,
        modelId: model,
        requestId: id,
        source: "API",
        quotedUsdMicro: 10n,
      });
      await a.ctx.jobs.in(tx).insert({
        id,
        accountId,
        keyId: null,
        modelId: model,
        kind: "image",
        source: "API",
        provider: "sandbox",
        input: "{}",
        quote: "{}",
        holdId: hold.id,
        webhookUrl: null,
        deadlineAt: Date.now() + 600_000,
        createdAt: Date.now(),
      });
      ids.push(id);
    }
  });
  return ids;
}

async function setup(dialect: "sqlite" | "postgres") {
  const opened = await openAppInstances(dialect);
  open = opened;
  const a = opened.first;
  const b = await open.add();
  await a.ctx.ledger.topUp(opened.accountId, 100_000_000n, null);
  const claim = (i: AppInstance, k: number, caps: Record<string, number> = {}, owner = "w") =>
    i.ctx.jobs.claimBatch("sandbox", k, new Map(Object.entries(caps)), owner, LEASE, Date.now());
  return { a, b, accountId: opened.accountId, claim };
}

const ids = (rows: JobRow[]) => rows.map((r) => r.id);

describe.each(dialects())("batch job claims (%s)", (dialect) => {
  test("a batch takes at most k jobs, oldest first, each with its own lease", async () => {
    const { a, accountId, claim } = await setup(dialect);
    const queued = await queue(a, accountId, ["m", "m", "m", "m", "m"]);
    const first = await claim(a, 3, {}, "owner-1");
    expect(ids(first)).toEqual(queued.slice(0, 3));
    for (const job of first) {
      expect(job).toMatchObject({ status: "IN_PROGRESS", lease_owner: "owner-1", attempt: 1n });
      expect(Number(job.lease_until)).toBeGreaterThan(Date.now() + LEASE - 60_000);
    }
    expect(ids(await claim(a, 3))).toEqual(queued.slice(3));
    expect(await claim(a, 3)).toEqual([]);
    expect(await claim(a, 0)).toEqual([]);
    // A requeued job is claimed again with the next attempt.
    await a.ctx.jobs.fenced("owner-1", 1n).requeue(queued[0]!, Date.now() - 1);
    expect(await claim(a, 3, {}, "owner-2")).toMatchObject([
      { id: queued[0], attempt: 2n, lease_owner: "owner-2" },
    ]);
  });

  test("each model's share is bounded by its remaining cap, in queue order; a model at 0 is skipped", async () => {
    const { a, accountId, claim } = await setup(dialect);
    const q = await queue(a, accountId, ["A", "A", "B", "A", "B", "C", "A", "C"]);
    // A: 1 left, B: at its cap, C: no cap.
    expect(ids(await claim(a, 10, { A: 1, B: 0 }))).toEqual([q[0]!, q[5]!, q[7]!]);
    // A: 2 left, k smaller than what is claimable: the k oldest.
    expect(ids(await claim(a, 2, { A: 2, B: 0 }))).toEqual([q[1]!, q[3]!]);
    expect(ids(await claim(a, 10, { A: 5, B: 1 }))).toEqual([q[2]!, q[6]!]);
    expect(ids(await claim(a, 10, { B: 5 }))).toEqual([q[4]!]);
  });

  test("claimNext skips busy models and jobs backing off", async () => {
    const { a, accountId } = await setup(dialect);
    const q = await queue(a, accountId, ["A", "B"]);
    const next = (busy: string[]) => a.ctx.jobs.claimNext("sandbox", busy, "w", LEASE, Date.now());
    await a.ctx.jobs.fenced("w", 1n).requeue(q[1]!, Date.now() + 60_000); // not claimed: no-op
    expect((await next(["A"]))!.id).toBe(q[1]!);
    await a.ctx.jobs.fenced("w", 1n).requeue(q[1]!, Date.now() + 60_000);
    expect(await next(["A"])).toBeNull();
    expect((await next([]))!.id).toBe(q[0]!);
  });

  test("eight claimers (on two instances on PostgreSQL) over 300 jobs claim every job exactly once, each batch in order", async () => {
    const { a, b, accountId, claim } = await setup(dialect);
    const models = Array.from({ length: 300 }, (_, n) => `m${n % 3}`);
    const queued = await queue(a, accountId, models);
    const seqOf = new Map<string, bigint>();
    const claimed: string[] = [];
    const drain = async (i: AppInstance, k: number, owner: string) => {
      for (;;) {
        const rows = await claim(i, k, {}, owner);
        if (rows.length === 0) return;
        expect(rows.length).toBeLessThanOrEqual(k);
        for (const r of rows) seqOf.set(r.id, r.seq);
        const seqs = rows.map((r) => r.seq);
        expect(seqs).toEqual([...seqs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
        claimed.push(...ids(rows));
      }
    };
    // SQLite is one instance: two connections to one file in one process would block each
    // other's transactions (busy_timeout holds the thread), so its claimers share one connection.
    const on = (n: number) => (n % 2 === 0 || dialect === "sqlite" ? a : b);
    await Promise.all(Array.from({ length: 8 }, (_, n) => drain(on(n), 1 + (n % 5), `w${n}`)));
    // Under a race an empty batch does not mean nothing is due: one claimer alone drains the rest.
    await drain(a, 7, "last");
    expect(claimed.length).toBe(queued.length);
    expect(new Set(claimed)).toEqual(new Set(queued));
    const inProgress = await a.ctx.sql.get<{ n: bigint }>(
      "SELECT count(*) AS n FROM jobs WHERE status = 'IN_PROGRESS' AND attempt = 1",
    );
    expect(Number(inProgress!.n)).toBe(queued.length);
  }, 60_000);
});
