import { describe, expect, test } from "bun:test";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { jobFixture } from "./job-fixture.ts";

describe("lease fencing", () => {
  test("a worker whose lease lapsed and whose job was claimed again cannot finish, fail, requeue or annotate it", async () => {
    const s = await jobFixture();
    const id = await s.submit();
    const first = (await s.jobs.claimNext("sandbox", [], "worker-a", 60_000, Date.now()))!;
    expect(first.attempt).toBe(1n);
    // Recovery (unfenced) puts the lapsed job back; another worker claims it: attempt 2.
    expect(await s.jobs.requeue(id, 0)).toBe(true);
    const second = (await s.jobs.claimNext("sandbox", [], "worker-b", 60_000, Date.now()))!;
    expect(second.attempt).toBe(2n);

    const stale = s.jobs.fenced("worker-a", 1n);
    expect(await stale.complete(id, {}, [], 500n, null, 60_000, Date.now())).toBe(false);
    expect(await stale.fail(id, "generation_failed", "late", Date.now())).toBe(false);
    expect(await stale.requeue(id, 0)).toBe(false);
    await stale.setUpstreamId(id, "up-stale");
    await s.jobLogs.fenced("worker-a", 1n).append(id, "info", "a stale worker's line", Date.now());
    // The same owner with the old attempt is stale too (a restarted worker reusing its name).
    expect(await s.jobs.fenced("worker-b", 1n).complete(id, {}, [], 500n, null, 60_000, Date.now())).toBe(
      false,
    );
    expect((await s.jobs.get(id))!).toMatchObject({ status: "IN_PROGRESS", upstream_id: null });

    const current = s.jobs.fenced("worker-b", 2n);
    await current.setUpstreamId(id, "up-b");
    await s.jobLogs.fenced("worker-b", 2n).append(id, "info", "the current worker's line", Date.now());
    expect((await s.jobLogs.list(id)).map((l) => l.message)).toEqual(["the current worker's line"]);
    expect(await current.complete(id, {}, [], 500n, null, 60_000, Date.now())).toBe(true);
    expect((await s.jobs.get(id))!).toMatchObject({ status: "COMPLETED", upstream_id: "up-b" });
    expect(s.finals).toEqual([`${id}:COMPLETED`]);
    expect(await checkInvariants(s.db)).toEqual([]);
  });
});
