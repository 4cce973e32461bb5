import { afterAll, describe, expect, test } from "bun:test";
import { seededRandom } from "../../src/providers/routes.ts";
import { finalJob } from "../helpers/context.ts";
import { DATA_RESULT, routed, twoFals } from "./routes-fixture.ts";

/**
 * Weighted routing end to end (docs/providers.md "Routes"): jobs submitted through the queue door
 * of a model with `routing = "weighted"` start on their routes in proportion to the weights, each
 * completes on the route it started on, charged once, with that route's cost. The draw is seeded
 * (the context's routeRandom), so the split is exact for the seed and the test cannot flake.
 */
const ROUTES = [
  { provider: "first", upstream_model: "fal-ai/one", cost_usd_micro: 25_000, weight: 3 },
  { provider: "second", upstream_model: "fal-ai/two", cost_usd_micro: 27_000, weight: 1 },
];
const f = await twoFals([routed("r/weighted", ROUTES, { routing: "weighted" })]);
f.a.on("fal-ai/one", { result: DATA_RESULT });
f.b.on("fal-ai/two", { result: DATA_RESULT });
afterAll(async () => await f.stop());

describe("weighted routing through the queue door", () => {
  f.start();

  test("80 jobs at 3:1 start on their routes within 10 points of 75 %, each charged once with its route's cost", async () => {
    f.t.ctx.routeRandom = seededRandom(35);
    const jobs = [];
    // In batches of 20: a key has at most 20 jobs in flight.
    for (let batch = 0; batch < 4; batch++) {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await f.submit("r/weighted"));
      jobs.push(...(await Promise.all(ids.map((id) => finalJob(f.t.ctx, id)))));
    }
    const onFirst = jobs.filter((j) => j.provider === "first").length;
    // Binomial(80, 0.75) has a standard deviation of 3.9 jobs (4.8 points): 10 points is 2 of them,
    // and the seed fixes the draw, so this either always holds or never does.
    expect(Math.abs(onFirst / 80 - 0.75)).toBeLessThanOrEqual(0.1);
    expect(onFirst).toBeLessThan(80); // both routes were drawn
    for (const job of jobs) {
      expect(job.status).toBe("COMPLETED");
      const first = job.provider === "first";
      expect(job.route).toBe(first ? 0n : 1n);
      expect(job.cost_usd_micro).toBe(first ? 25_000n : 27_000n);
      const hold = (await f.t.ctx.ledger.getHold(job.hold_id))!;
      expect(hold).toMatchObject({ status: "settled", charged_micro: 30_000n });
    }
    // Each upstream got exactly the jobs that ran on it: nothing submitted twice.
    expect(f.a.callsTo("submit").length).toBe(onFirst);
    expect(f.b.callsTo("submit").length).toBe(80 - onFirst);
  }, 60_000);
});
