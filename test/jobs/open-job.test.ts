import { describe, expect, test } from "bun:test";
import { fingerprint } from "../../src/idempotency/idempotency.ts";
import { openJob, openJobOnce } from "../../src/jobs/open.ts";
import { openJobs } from "../helpers/backend.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { idAnswer, openJobSetup } from "./open-job-fixture.ts";

describe("openJob: the one path that opens a job", () => {
  test("a media job is queued with its hold, in one transaction", async () => {
    const s = await openJobSetup();
    const opened = await openJob(s.t.ctx, s.media());
    expect(opened.replay).toBeNull();
    const job = opened.value!;
    expect(job).toMatchObject({
      status: "IN_QUEUE",
      kind: "image",
      source: "API",
      key_id: s.principal.keyId,
    });
    expect(await s.t.ctx.jobs.get(job.id)).toEqual(job);
    const hold = (await s.t.ctx.ledger.getHold(job.hold_id))!;
    expect(hold).toMatchObject({ status: "open", request_id: job.id, source: "API" });
    expect(hold.quoted_usd_micro).toBe(s.media().quote.amount_usd_micro);
    expect(await openJobs(s.t.ctx.sql, { keyId: s.principal.keyId })).toBe(1);
    expect(s.t.ctx.jobs.queuePosition(job)).toBe(0); // handed to the queue after the commit
    expect(await checkInvariants(s.t.ctx.sql)).toEqual([]);
  });

  test("a text job (chat) runs in the request: IN_PROGRESS, leased to its deadline", async () => {
    const s = await openJobSetup();
    const job = (await openJob(s.t.ctx, s.text())).value!;
    expect(job).toMatchObject({ status: "IN_PROGRESS", kind: "text", attempt: 1n, lease_owner: "request" });
    expect(job.lease_until).toBe(job.deadline_at);
    expect(s.t.ctx.jobs.queuePosition(job)).toBeNull();
    expect(await checkInvariants(s.t.ctx.sql)).toEqual([]);
  });

  test("with an Idempotency-Key the answer is stored with the job, and a repeat replays it", async () => {
    const s = await openJobSetup();
    const claim = {
      key: "k1",
      fingerprint: fingerprint("POST", "/v1/queue/sandbox/image", { prompt: "a cat" }),
    };
    const first = await openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer });
    const again = await openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer });
    expect(again.replay).toEqual({ status: 202, body: JSON.stringify({ request_id: first.value!.id }) });
    expect(await s.jobs()).toBe(1);
    expect(await s.holds()).toBe(1);
  });
});
