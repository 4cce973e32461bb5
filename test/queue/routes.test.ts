import { afterAll, describe, expect, test } from "bun:test";
import { circuitFor } from "../../src/providers/circuit.ts";
import { ADMIN_TOKEN, finalJob } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { DATA_RESULT, routed, twoFals } from "./routes-fixture.ts";

/**
 * Fallback between a model's routes before an upstream accepts the job (docs/providers.md
 * "Fallback"): each refusal at the submit moves the job to the next route, where it completes,
 * charged once, with the route that ran it and that route's cost on the job.
 */
const ROUTES = [
  { provider: "first", upstream_model: "fal-ai/one", cost_usd_micro: 25_000 },
  { provider: "second", upstream_model: "fal-ai/two", cost_usd_micro: 27_000 },
];
const f = await twoFals([
  routed("r/503", ROUTES),
  routed("r/429", ROUTES),
  routed("r/down", [{ provider: "down", upstream_model: "fal-ai/one", cost_usd_micro: 1 }, ROUTES[1]]),
  routed("r/open", ROUTES),
  routed("r/queued-open", ROUTES),
  routed("r/ok", ROUTES),
]);
f.b.on("fal-ai/two", { result: DATA_RESULT });
f.a.on("fal-ai/one", { result: DATA_RESULT });
afterAll(async () => await f.stop());

async function completedOnSecond(id: string) {
  const job = await finalJob(f.t.ctx, id);
  expect(job.status).toBe("COMPLETED");
  expect(job.provider).toBe("second");
  expect(job.route).toBe(1n);
  // One image delivered on the second route: its unit cost once; the client's price once.
  expect(job.cost_usd_micro).toBe(27_000n);
  const hold = (await f.t.ctx.ledger.getHold(job.hold_id))!;
  expect(hold.status).toBe("settled");
  expect(hold.amount_micro).toBe(30_000n);
  return job;
}

describe("fallback before an upstream accepts the job", () => {
  f.start();

  test("a job on its first route completes there, with that route's cost", async () => {
    const before = f.a.callsTo("submit").length;
    const job = await finalJob(f.t.ctx, await f.submit("r/ok"));
    expect(job).toMatchObject({ status: "COMPLETED", provider: "first", route: 0n, cost_usd_micro: 25_000n });
    expect(f.a.callsTo("submit").length).toBe(before + 1);
  });

  test("503 at the first route's submit: completes on the second, charged once", async () => {
    f.a.on("fal-ai/one", { submit: [{ status: 503 }], result: DATA_RESULT });
    const submitsB = f.b.callsTo("submit").length;
    await completedOnSecond(await f.submit("r/503"));
    expect(f.b.callsTo("submit").length).toBe(submitsB + 1);
  });

  test("429 at the first route's submit: completes on the second, charged once", async () => {
    f.a.on("fal-ai/one", { submit: [{ status: 429, retryAfter: 30 }], result: DATA_RESULT });
    await completedOnSecond(await f.submit("r/429"));
  });

  test("the first route's connection refused: completes on the second", async () => {
    const id = await f.submit("r/down");
    const job = await finalJob(f.t.ctx, id);
    expect(job).toMatchObject({
      status: "COMPLETED",
      provider: "second",
      route: 1n,
      cost_usd_micro: 27_000n,
    });
  });

  test("the first route's circuit open at the submit: the job starts on the second", async () => {
    const circuit = circuitFor(f.t.ctx.circuits, "first");
    for (let i = 0; i < 5; i++) circuit.failure();
    try {
      const submitsA = f.a.callsTo("submit").length;
      await completedOnSecond(await f.submit("r/open"));
      expect(f.a.callsTo("submit").length).toBe(submitsA);
    } finally {
      circuit.success();
    }
  });

  test("the per-route counters count each completion once, under the route that ran it", async () => {
    const m = f.t.ctx.metrics;
    const at = (name: "routeSettled" | "routeRevenue" | "routeCost" | "routeCostUnknown") =>
      m[name].get(["second", "r/503"]);
    // r/503 completed once, on "second": one image at $0.03, cost $0.027.
    expect([at("routeSettled"), at("routeRevenue"), at("routeCost"), at("routeCostUnknown")]).toEqual([
      1,
      30_000n,
      27_000n,
      0,
    ]);
    expect(m.routeSettled.get(["first", "r/503"])).toBe(0);
    const scrape = await f.t.request("/metrics", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await scrape.text();
    expect(text).toContain('gengate_route_cost_usd_micro_total{provider="second",model="r/503"} 27000');
    expect(text).toContain('gengate_route_jobs_settled_total{provider="first",model="r/ok"} 1');
  });

  test("the ledger balances after every fallback", async () => {
    expect(await checkInvariants(f.t.ctx.sql)).toEqual([]);
  });
});
