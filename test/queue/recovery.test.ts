import { describe, expect, test } from "bun:test";
import type { Provider } from "../../src/providers/types.ts";
import { SWEEP_SQL } from "../../src/queue/job-store.ts";
import { recoverJobs } from "../../src/queue/recovery.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { jobFixture } from "./job-fixture.ts";

async function setup() {
  const resumable = new Map<string, Provider>([
    ["sandbox", { name: "sandbox", resumable: () => true, run: async () => ({ outputs: [] }) }],
  ]);
  return { ...(await jobFixture()), resumable };
}

describe("recovery sweep", () => {
  test("open jobs past their deadline fail with the hold released; others are left alone", async () => {
    const s = await setup();
    const now = Date.now();
    const lateQueued = await s.submit({ deadlineAt: now - 1 });
    const lateRunning = await s.submit({ deadlineAt: now - 1 });
    const onTime = await s.submit({ deadlineAt: now + 60_000 });
    expect((await s.jobs.claimNext("sandbox", [], "w", 60_000, now))!.id).toBe(lateQueued);
    expect((await s.jobs.claimNext("sandbox", [], "w", 60_000, now))!.id).toBe(lateRunning);
    await s.jobs.fail(lateQueued, "generation_failed", "already failed", now); // final jobs are not swept
    const lateQueued2 = await s.submit({ deadlineAt: now - 1 });

    expect(await recoverJobs(s, s.resumable, now, false)).toEqual({ requeued: 0, failed: 2 });
    for (const id of [lateRunning, lateQueued2]) {
      const job = (await s.jobs.get(id))!;
      expect(job.status).toBe("FAILED");
      expect(job.error_message).toContain("time limit");
      expect((await s.ledger.getHold(job.hold_id))!.status).toBe("released");
    }
    expect((await s.jobs.get(lateQueued))!.error_message).toBe("already failed");
    expect((await s.jobs.get(onTime))!.status).toBe("IN_QUEUE");
    expect(await checkInvariants(s.db)).toEqual([]);
  });

  test("a lapsed lease puts a resumable job back in the queue; a chat call fails instead", async () => {
    const s = await setup();
    const now = Date.now();
    const media = await s.submit({ deadlineAt: now + 600_000 });
    const chat = await s.submit({ deadlineAt: now + 600_000, kind: "text" });
    const fresh = await s.submit({ deadlineAt: now + 600_000 });
    await s.jobs.claimNext("sandbox", [], "w", 1_000, now);
    await s.jobs.claimNext("sandbox", [], "w", 1_000, now);
    await s.jobs.claimNext("sandbox", [], "w", 60_000, now);

    expect(await recoverJobs(s, s.resumable, now + 5_000, false)).toEqual({ requeued: 1, failed: 1 });
    expect((await s.jobs.get(media))!.status).toBe("IN_QUEUE");
    expect((await s.jobLogs.list(media)).map((l) => l.message)).toContain("worker lost; resuming the job");
    expect((await s.jobs.get(chat))!.status).toBe("FAILED");
    expect((await s.ledger.getHold((await s.jobs.get(chat))!.hold_id))!.status).toBe("released");
    expect((await s.jobs.get(fresh))!.status).toBe("IN_PROGRESS"); // its lease has not lapsed
    // At start-up every running job is orphaned, whatever its lease says.
    expect(await recoverJobs(s, s.resumable, now + 5_000, true)).toEqual({ requeued: 1, failed: 0 });
    expect((await s.jobs.get(fresh))!.status).toBe("IN_QUEUE");
    expect(await checkInvariants(s.db)).toEqual([]);
  });

  test("swept jobs come oldest submit first", async () => {
    const s = await setup();
    const now = Date.now();
    const ids = [await s.submit({ deadlineAt: now - 1 }), await s.submit({ deadlineAt: now - 5 })];
    ids.push(await s.submit({ deadlineAt: now - 3 }));
    expect((await s.jobs.pastDeadline(now)).map((j) => j.id)).toEqual(ids);
  });

  test("the sweeps read the open-job indexes, never the whole jobs table", async () => {
    const s = await setup();
    for (let i = 0; i < 50; i++) await s.submit({ deadlineAt: Date.now() + 60_000 });
    for (const sql of Object.values(SWEEP_SQL)) {
      const plan = (s.db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join("; ");
      expect(plan).toMatch(/USING INDEX (jobs_running|jobs_open_deadline)/);
    }
  });
});
