// Every (state, transition) pair of the job state machine on JobStore itself, unfenced (as recovery,
// a cancel or a chat call call it; the workers' lease-fenced view is test/queue/fencing.test.ts).
// The expected table is written out here from the state table of the contract, not read from the
// code: an allowed pair moves the job and has exactly its side effects; a refused one answers false
// and changes nothing at all (job row, ledger entries, holds, balances, webhook outbox, outputs,
// the key's open-job counter). Run on PostgreSQL by scripts/test-postgres.
import { describe, expect, test } from "bun:test";
import type { JobStatus } from "../../src/queue/job-row.ts";
import { countRows } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";

type Transition = "claim" | "requeue" | "complete" | "fail" | "cancel" | "renewLease" | "setUpstreamId";
const STATES: JobStatus[] = ["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED"];
const TRANSITIONS: Transition[] = [
  "claim",
  "requeue",
  "complete",
  "fail",
  "cancel",
  "renewLease",
  "setUpstreamId",
];

/** The status each allowed pair leads to; a pair not listed is refused. */
const ALLOWED: Partial<Record<JobStatus, Partial<Record<Transition, JobStatus>>>> = {
  IN_QUEUE: { claim: "IN_PROGRESS", fail: "FAILED", cancel: "CANCELLED" },
  IN_PROGRESS: {
    requeue: "IN_QUEUE",
    complete: "COMPLETED",
    fail: "FAILED",
    renewLease: "IN_PROGRESS",
    setUpstreamId: "IN_PROGRESS",
  },
};

const HOLD = 1_000n;
const CHARGE = 600n;
const OWNER = "worker-a";

type App = Awaited<ReturnType<typeof testQueueServices>>;

/** Everything a transition could touch, for one job and its account and key. */
async function snapshot(t: App, id: string) {
  const job = (await t.ctx.jobs.get(id))!;
  const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
  const account = (await t.ctx.accounts.getAccount(t.account.id))!;
  return {
    job,
    hold,
    balance: account.balance_micro,
    held: account.held_micro,
    entries: await t.ctx.sql.all<{ kind: string; amount_micro: bigint }>(
      "SELECT kind, amount_micro FROM ledger_entries WHERE hold_id = ? ORDER BY id",
      [job.hold_id],
    ),
    webhooks: await countRows(t.ctx.sql, "webhook_deliveries WHERE request_id = ?", [id]),
    outputs: await countRows(t.ctx.sql, "job_outputs WHERE job_id = ?", [id]),
    openJobs: (await t.ctx.sql.get<{ n: bigint }>("SELECT open_jobs AS n FROM api_keys WHERE id = ?", [
      t.keyId,
    ]))!.n,
  };
}

let n = 0;
/** A job of its own provider (so a claim can only take this one), reserved and inserted as a submit does. */
async function openJob(t: App): Promise<{ id: string; provider: string }> {
  const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
  const provider = `table-${n}`;
  await t.ctx.sql.tx(async (tx) => {
    const hold = await t.ctx.ledger.in(tx).reserve({
      accountId: t.account.id,
      keyId: t.keyId,
      modelId: "m",
      requestId: id,
      source: "API",
      quotedUsdMicro: HOLD,
    });
    await t.ctx.jobs.in(tx).insert({
      id,
      accountId: t.account.id,
      keyId: t.keyId,
      modelId: "m",
      kind: "image",
      source: "API",
      provider,
      input: "{}",
      quote: "{}",
      holdId: hold.id,
      // The final-state hook writes its delivery row: refused transitions must not.
      webhookUrl: "https://hooks.example.com/gengate",
      deadlineAt: Date.now() + 600_000,
      createdAt: Date.now(),
    });
  });
  return { id, provider };
}

/** Brings a new job to `state` through the store's own transitions. */
async function jobIn(t: App, state: JobStatus) {
  const job = await openJob(t);
  const now = Date.now();
  const claim = async () =>
    expect((await t.ctx.jobs.claimNext(job.provider, [], OWNER, 600_000, now))?.id).toBe(job.id);
  if (state === "IN_PROGRESS") await claim();
  if (state === "COMPLETED") {
    await claim();
    expect(await t.ctx.jobs.complete(job.id, { ok: 1 }, [], CHARGE, null, 60_000, now)).toBe(true);
  }
  if (state === "FAILED") expect(await t.ctx.jobs.fail(job.id, "generation_failed", "x", now)).toBe(true);
  if (state === "CANCELLED") expect(await t.ctx.jobs.cancel(job.id, now)).toBe(true);
  expect((await t.ctx.jobs.get(job.id))!.status).toBe(state);
  return job;
}

/** Applies a transition unfenced; true when the store says it changed the job. */
async function apply(
  t: App,
  job: { id: string; provider: string },
  transition: Transition,
): Promise<boolean> {
  const now = Date.now();
  const jobs = t.ctx.jobs;
  switch (transition) {
    case "claim":
      return (await jobs.claimNext(job.provider, [], "worker-b", 600_000, now)) !== null;
    case "requeue":
      return await jobs.requeue(job.id, 0);
    case "complete":
      return await jobs.complete(
        job.id,
        { ok: 2 },
        [
          {
            idx: 0,
            path: `outputs/${job.id}/0.png`,
            contentType: "image/png",
            size: 10,
            sha256: "0".repeat(64),
          },
        ],
        CHARGE,
        null,
        60_000,
        now,
      );
    case "fail":
      return await jobs.fail(job.id, "generation_failed", "from the table", now);
    case "cancel":
      return await jobs.cancel(job.id, now);
    case "renewLease":
      return await jobs.renewLease(job.id, OWNER, now + 900_000);
    case "setUpstreamId": {
      await jobs.setUpstreamId(job.id, "upstream-from-the-table");
      return (await jobs.get(job.id))!.upstream_id === "upstream-from-the-table";
    }
  }
}

describe("job transitions on JobStore, every (state, transition) pair", () => {
  for (const state of STATES) {
    test(`from ${state}`, async () => {
      const t = await testQueueServices();
      await t.ctx.ledger.topUp(t.account.id, 1_000_000n, "funds");
      for (const transition of TRANSITIONS) {
        const job = await jobIn(t, state);
        const before = await snapshot(t, job.id);
        const changed = await apply(t, job, transition);
        const after = await snapshot(t, job.id);
        const to = ALLOWED[state]?.[transition];
        const pair = `${state} --${transition}-->`;
        expect(`${pair} ${changed ? "done" : "refused"}`).toBe(`${pair} ${to ? "done" : "refused"}`);
        if (!to) {
          // Refused: nothing at all changed.
          expect(after).toEqual(before);
          continue;
        }
        expect(after.job.status).toBe(to);
        const final = to === "COMPLETED" || to === "FAILED" || to === "CANCELLED";
        // A final state: the hold resolved once, one webhook row, the key's counter down by one.
        expect(after.webhooks - before.webhooks).toBe(final ? 1 : 0);
        expect(after.openJobs - before.openJobs).toBe(final ? -1n : 0n);
        expect(after.hold.status).toBe(
          to === "COMPLETED" ? "settled" : to === "FAILED" || to === "CANCELLED" ? "released" : "open",
        );
        const newEntries = after.entries
          .slice(before.entries.length)
          .map((e) => `${e.kind}:${e.amount_micro}`);
        expect(newEntries).toEqual(
          to === "COMPLETED"
            ? [`charge:${CHARGE}`, `release:${HOLD - CHARGE}`]
            : to === "FAILED" || to === "CANCELLED"
              ? [`release:${HOLD}`]
              : [],
        );
        expect(after.balance - before.balance).toBe(to === "COMPLETED" ? -CHARGE : 0n);
        expect(after.held - before.held).toBe(final ? -HOLD : 0n);
        expect(after.outputs - before.outputs).toBe(to === "COMPLETED" ? 1 : 0);
        if (transition === "claim") expect(after.job.attempt).toBe(before.job.attempt + 1n);
        if (transition === "requeue") expect(after.job.lease_owner).toBeNull();
        if (transition === "renewLease") expect(after.job.lease_until).not.toBe(before.job.lease_until);
      }
    });
  }
});
