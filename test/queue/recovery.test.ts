import { describe, expect, test } from "bun:test";
import type { Provider } from "../../src/providers/types.ts";
import { SWEEP_SQL } from "../../src/queue/jobs.ts";
import { recoverJobs } from "../../src/queue/recovery.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { jobFixture } from "./job-fixture.ts";

function setup() {
  const resumable = new Map<string, Provider>([
    ["sandbox", { name: "sandbox", resumable: () => true, run: async () => ({ outputs: [] }) }],
  ]);
  return { ...jobFixture(), resumable };
}

describe("recovery sweep", () => {
  test("open jobs past their deadline fail with the hold released; others are left alone", () => {
    const s = setup();
    const now = Date.now();
    const lateQueued = s.submit({ deadlineAt: now - 1 });
    const lateRunning = s.submit({ deadlineAt: now - 1 });
    const onTime = s.submit({ deadlineAt: now + 60_000 });
    expect(s.jobs.claimNext("sandbox", [], "w", 60_000, now)!.id).toBe(lateQueued);
    expect(s.jobs.claimNext("sandbox", [], "w", 60_000, now)!.id).toBe(lateRunning);
    s.jobs.fail(lateQueued, "generation_failed", "already failed", now); // final jobs are not swept
    const lateQueued2 = s.submit({ deadlineAt: now - 1 });

    expect(recoverJobs(s.jobs, s.resumable, now, false)).toEqual({ requeued: 0, failed: 2 });
    for (const id of [lateRunning, lateQueued2]) {
      const job = s.jobs.get(id)!;
      expect(job.status).toBe("FAILED");
      expect(job.error_message).toContain("time limit");
      expect(s.ledger.getHold(job.hold_id)!.status).toBe("released");
    }
    expect(s.jobs.get(lateQueued)!.error_message).toBe("already failed");
    expect(s.jobs.get(onTime)!.status).toBe("IN_QUEUE");
    expect(checkInvariants(s.db)).toEqual([]);
  });

  test("a lapsed lease puts a resumable job back in the queue; a chat call fails instead", () => {
    const s = setup();
    const now = Date.now();
    const media = s.submit({ deadlineAt: now + 600_000 });
    const chat = s.submit({ deadlineAt: now + 600_000, kind: "text" });
    const fresh = s.submit({ deadlineAt: now + 600_000 });
    s.jobs.claimNext("sandbox", [], "w", 1_000, now);
    s.jobs.claimNext("sandbox", [], "w", 1_000, now);
    s.jobs.claimNext("sandbox", [], "w", 60_000, now);

    expect(recoverJobs(s.jobs, s.resumable, now + 5_000, false)).toEqual({ requeued: 1, failed: 1 });
    expect(s.jobs.get(media)!.status).toBe("IN_QUEUE");
    expect(s.jobs.logs(media).map((l) => l.message)).toContain("worker lost; resuming the job");
    expect(s.jobs.get(chat)!.status).toBe("FAILED");
    expect(s.ledger.getHold(s.jobs.get(chat)!.hold_id)!.status).toBe("released");
    expect(s.jobs.get(fresh)!.status).toBe("IN_PROGRESS"); // its lease has not lapsed
    // At start-up every running job is orphaned, whatever its lease says.
    expect(recoverJobs(s.jobs, s.resumable, now + 5_000, true)).toEqual({ requeued: 1, failed: 0 });
    expect(s.jobs.get(fresh)!.status).toBe("IN_QUEUE");
    expect(checkInvariants(s.db)).toEqual([]);
  });

  test("swept jobs come oldest submit first", () => {
    const s = setup();
    const now = Date.now();
    const ids = [s.submit({ deadlineAt: now - 1 }), s.submit({ deadlineAt: now - 5 })];
    ids.push(s.submit({ deadlineAt: now - 3 }));
    expect(s.jobs.pastDeadline(now).map((j) => j.id)).toEqual(ids);
  });

  test("the sweeps read the open-job indexes, never the whole jobs table", () => {
    const s = setup();
    for (let i = 0; i < 50; i++) s.submit({ deadlineAt: Date.now() + 60_000 });
    for (const sql of Object.values(SWEEP_SQL)) {
      const plan = (s.db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join("; ");
      expect(plan).toMatch(/USING INDEX (jobs_running|jobs_open_deadline)/);
    }
  });
});
