import { afterAll, describe, expect, test } from "bun:test";
import { circuitFor } from "../../src/providers/circuit.ts";
import { ProviderError, type ProviderJob } from "../../src/providers/types.ts";
import { finalJob, json } from "../helpers/context.ts";
import { DATA_RESULT, routed, twoFals } from "./routes-fixture.ts";

/**
 * What never moves a job to another route (docs/providers.md "Fallback"): an upstream that accepted
 * it (its id recorded) and then went down, or a submit whose outcome is unknown (the connection
 * dropped after sending, a proxy's 502): the second stand-in counts no submit. And when every route
 * refuses, the job backs off; when every route's circuit is open, the door answers 503.
 */
const routes = (one: string, two: string) => [
  { provider: "first", upstream_model: one, cost_usd_micro: 25_000 },
  { provider: "second", upstream_model: two, cost_usd_micro: 27_000 },
];
const f = await twoFals([
  routed("e/down-after", routes("fal-ai/down-after", "fal-ai/never1")),
  routed("e/drop", routes("fal-ai/drop", "fal-ai/never2")),
  routed("e/proxy", routes("fal-ai/proxy", "fal-ai/never3")),
  routed("e/input", routes("fal-ai/input", "fal-ai/never4")),
  routed("e/all", routes("fal-ai/all", "fal-ai/all2")),
  routed("e/open", routes("fal-ai/open", "fal-ai/open2")),
]);
afterAll(async () => await f.stop());
const submitsToSecond = (upstream: string) => f.b.callsTo("submit", upstream).length;

describe("a job an upstream accepted, or may have received, stays there", () => {
  f.start();

  test("accepted, then its upstream goes down (its status polls 503, then dropped): resumed there, never sent to the second", async () => {
    f.a.on("fal-ai/down-after", {
      status: [{ status: 503 }, "drop", { status: 503 }, "drop"],
      result: DATA_RESULT,
    });
    const job = await finalJob(f.t.ctx, await f.submit("e/down-after"));
    expect(job).toMatchObject({ status: "COMPLETED", provider: "first", route: 0n, cost_usd_micro: 25_000n });
    expect(f.a.callsTo("submit", "fal-ai/down-after").length).toBe(1);
    expect(submitsToSecond("fal-ai/never1")).toBe(0);
  });

  test("the submit's connection dropped after sending (fal may have queued it): failed, not sent to the second", async () => {
    f.a.on("fal-ai/drop", { submit: ["drop"], result: DATA_RESULT });
    const job = await finalJob(f.t.ctx, await f.submit("e/drop"));
    expect(job).toMatchObject({ status: "FAILED", provider: "first", cost_usd_micro: null });
    expect(submitsToSecond("fal-ai/never2")).toBe(0);
  });

  test("a proxy's 502 at the submit (fal may have queued it): failed, not sent to the second", async () => {
    f.a.on("fal-ai/proxy", { submit: [{ status: 502 }], result: DATA_RESULT });
    const job = await finalJob(f.t.ctx, await f.submit("e/proxy"));
    expect(job.status).toBe("FAILED");
    expect(submitsToSecond("fal-ai/never3")).toBe(0);
  });

  test("the input refused (422): failed, no fallback (another upstream would refuse it too)", async () => {
    f.a.on("fal-ai/input", { submit: [{ status: 422, detail: "bad prompt" }], result: DATA_RESULT });
    const job = await finalJob(f.t.ctx, await f.submit("e/input"));
    expect(job.status).toBe("FAILED");
    expect(submitsToSecond("fal-ai/never4")).toBe(0);
  });
});

describe("every route refusing", () => {
  test("every route refuses the submit: the job backs off on its first route, then completes once", async () => {
    f.a.on("fal-ai/all", { submit: [{ status: 503 }, { status: 503 }], result: DATA_RESULT });
    f.b.on("fal-ai/all2", { submit: [{ status: 503, retryAfter: 1 }], result: DATA_RESULT });
    const job = await finalJob(f.t.ctx, await f.submit("e/all"));
    expect(job).toMatchObject({ status: "COMPLETED", provider: "second", route: 1n });
    expect(f.a.callsTo("submit", "fal-ai/all").length).toBe(2);
    expect(f.b.callsTo("submit", "fal-ai/all2").length).toBe(2); // one refusal, then the one run
    const hold = (await f.t.ctx.ledger.getHold(job.hold_id))!;
    expect(hold.amount_micro).toBe(30_000n); // charged once
  });

  test("503 capacity_unavailable only when every route's circuit is open; nothing reserved", async () => {
    const first = circuitFor(f.t.ctx.circuits, "first");
    const second = circuitFor(f.t.ctx.circuits, "second");
    f.a.on("fal-ai/open", { result: DATA_RESULT });
    f.b.on("fal-ai/open2", { result: DATA_RESULT });
    try {
      for (let i = 0; i < 5; i++) first.failure();
      const one = await finalJob(f.t.ctx, await f.submit("e/open"));
      expect(one.provider).toBe("second"); // one route left: still served
      for (let i = 0; i < 5; i++) second.failure();
      const money = async () => {
        const a = (await f.t.ctx.accounts.getAccount(f.t.account.id))!;
        return [a.balance_micro, a.held_micro];
      };
      const before = await money();
      const res = await f.t.request("/v1/queue/e/open", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "x" }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBeTruthy();
      expect((await json<{ error: { code: string } }>(res)).error.code).toBe("capacity_unavailable");
      expect(await money()).toEqual(before);
    } finally {
      first.success();
      second.success();
    }
  });
});

describe("a circuit that opens while the job waits", () => {
  test("the job, queued on its first route, goes to the second when claimed", async () => {
    const g = await twoFals([routed("q/open", routes("fal-ai/q1", "fal-ai/q2"))]);
    try {
      g.a.on("fal-ai/q1", { result: DATA_RESULT });
      g.b.on("fal-ai/q2", { result: DATA_RESULT });
      const id = await g.submit("q/open"); // no worker yet: queued on "first"
      expect((await g.t.ctx.jobs.get(id))!.provider).toBe("first");
      const circuit = circuitFor(g.t.ctx.circuits, "first");
      for (let i = 0; i < 5; i++) circuit.failure();
      g.start();
      const job = await finalJob(g.t.ctx, id);
      expect(job).toMatchObject({ status: "COMPLETED", provider: "second", route: 1n });
      expect(g.a.callsTo("submit").length).toBe(0);
    } finally {
      await g.stop();
    }
  });
});

describe("the worker's guard", () => {
  test("a refusal raised after the adapter recorded an upstream id never moves the job", async () => {
    const g = await twoFals([routed("g/held", routes("fal-ai/g1", "fal-ai/g2"))]);
    try {
      g.b.on("fal-ai/g2", { result: DATA_RESULT });
      let runs = 0;
      g.t.ctx.providers.set("first", {
        name: "first",
        resumable: () => true,
        async run(job: ProviderJob) {
          runs++;
          if (runs === 1) {
            await job.setUpstreamId("upstream-1"); // accepted
            throw new ProviderError("capacity", "busy", { status: 503, notAccepted: true, retryAfterMs: 20 });
          }
          expect(job.upstreamId).toBe("upstream-1"); // resumed, not resubmitted
          return {
            outputs: [
              { kind: "image", contentType: "image/png", bytes: new Uint8Array([1]), width: 1, height: 1 },
            ],
          };
        },
      });
      g.start();
      const job = await finalJob(g.t.ctx, await g.submit("g/held"));
      expect(job).toMatchObject({
        status: "COMPLETED",
        provider: "first",
        route: 0n,
        upstream_id: "upstream-1",
      });
      expect(runs).toBe(2);
      expect(g.b.callsTo("submit").length).toBe(0);
    } finally {
      await g.stop();
    }
  });
});
