import { describe, expect, test } from "bun:test";
import { roundHalfUp } from "../../src/pricing/cost.ts";
import { seededRandom } from "../../src/providers/routes.ts";
import { type Provider, ProviderError, type ProviderJob } from "../../src/providers/types.ts";
import { finalJob, makeTestApp, submitQueued, testWorkerPool } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { jobFixture } from "./job-fixture.ts";

/**
 * Each settled job's cost is its route's unit cost times the units the charge used (docs/money.md
 * "Cost"), on every settlement path, over seeded random routes (costs, some unknown), delivered
 * units, refusals that move a job to its next route, and failures.
 */
const PRICE = 30_000;

/** Delivers 1..4 images, refuses before accepting (notAccepted), or fails: as the seed says. */
class RandomUpstream implements Provider {
  readonly name = "sandbox";
  constructor(private readonly plan: Map<string, { refuseOn: number[]; fail: boolean; images: number }>) {}
  resumable() {
    return true;
  }
  async run(job: ProviderJob) {
    const p = this.plan.get(String(job.input.prompt))!;
    if (p.refuseOn.includes(job.model.route ?? 0))
      throw new ProviderError("capacity", "busy", { status: 503, notAccepted: true, retryAfterMs: 10 });
    if (p.fail) throw new ProviderError("failed", "The upstream failed the call.", { status: 500 });
    return {
      outputs: Array.from({ length: p.images }, () => ({
        kind: "image" as const,
        contentType: "image/png",
        bytes: new Uint8Array([1, 2, 3]),
        width: 1,
        height: 1,
      })),
    };
  }
}

describe("a job's cost", () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: cost = the running route's unit cost x delivered units, or null; charge once`, async () => {
      const random = seededRandom(seed);
      const int = (n: number) => Math.floor(random() * n);
      // Three routes (all on the in-process provider): a cost each, one in four unknown.
      const routes = Array.from({ length: 3 }, () => ({
        provider: "sandbox",
        ...(int(4) === 0 ? {} : { cost_usd_micro: int(40_000) }),
      }));
      const t = await makeTestApp({
        models: [{ id: "p/img", kind: "image", price_usd_micro: PRICE, max: 4, routes }],
      });
      await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
      const plan = new Map<string, { refuseOn: number[]; fail: boolean; images: number }>();
      const ids: { id: string; images: number }[] = [];
      for (let i = 0; i < 18; i++) {
        const images = 1 + int(4);
        // Up to two refusing routes (the third always accepts), one job in five failing.
        const refuseOn = [0, 1, 2].filter(() => int(3) === 0).slice(0, 2);
        plan.set(`job ${i}`, { refuseOn, fail: int(5) === 0, images });
        ids.push({ id: await submitQueued(t, "p/img", { prompt: `job ${i}`, num_images: images }), images });
      }
      t.ctx.providers.set("sandbox", new RandomUpstream(plan));
      const pool = testWorkerPool(t.ctx);
      try {
        for (const { id, images } of ids) {
          const job = await finalJob(t.ctx, id);
          const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
          if (job.status === "FAILED") {
            expect(job.cost_usd_micro).toBeNull(); // may be billed upstream: unknown
            expect(hold.status).toBe("released");
            continue;
          }
          expect(job.status).toBe("COMPLETED");
          const route = routes[Number(job.route)]!;
          expect(plan.get(JSON.parse(job.input).prompt)!.refuseOn).not.toContain(Number(job.route));
          expect(job.actual_units).toBe(String(images));
          expect(hold.charged_usd_micro).toBe(BigInt(images * PRICE));
          expect(job.cost_usd_micro).toBe(
            "cost_usd_micro" in route ? BigInt(images * (route.cost_usd_micro as number)) : null,
          );
        }
        expect(await checkInvariants(t.ctx.sql)).toEqual([]);
      } finally {
        await pool.stop(1000);
      }
    });
  }

  test("rounding: half up to the micro-unit", () => {
    expect(roundHalfUp(5n, 2n)).toBe(3n); // 2.5 -> 3
    expect(roundHalfUp(24_999n, 10_000n)).toBe(2n); // 2.4999 -> 2
    expect(roundHalfUp(0n, 7n)).toBe(0n);
    const random = seededRandom(9);
    for (let i = 0; i < 1000; i++) {
      const n = BigInt(Math.floor(random() * 1e12));
      const d = BigInt(1 + Math.floor(random() * 1e6));
      const r = roundHalfUp(n, d);
      // |n/d - r| <= 1/2, and exactly 1/2 only rounding up.
      expect(2n * n >= (2n * r - 1n) * d && 2n * n < (2n * r + 1n) * d).toBe(true);
    }
  });
});

describe("cost and charge commit together", () => {
  test("the cost is in the UPDATE that completes the job, in the charge's transaction: a failure there leaves neither", async () => {
    let explode = true;
    // A final-state hook runs after the charge, inside the same transaction: a crash stand-in.
    const f = await jobFixture({
      finalHooks: [
        () => {
          if (explode) throw new Error("crash after the charge");
        },
      ],
    });
    const id = await f.submit();
    await f.jobs.claimNext("sandbox", [], "w", 30_000, Date.now());
    const complete = () => f.jobs.complete(id, {}, [], 900n, "1", 60_000, Date.now(), 700n);
    await expect(complete()).rejects.toThrow("crash after the charge");
    let job = (await f.jobs.get(id))!;
    expect(job).toMatchObject({ status: "IN_PROGRESS", cost_usd_micro: null });
    expect((await f.ledger.getHold(job.hold_id))!.status).toBe("open");
    explode = false;
    expect(await complete()).toBe(true);
    job = (await f.jobs.get(id))!;
    expect(job).toMatchObject({ status: "COMPLETED", cost_usd_micro: 700n });
    expect((await f.ledger.getHold(job.hold_id))!).toMatchObject({
      status: "settled",
      charged_usd_micro: 900n,
    });
  });

  test("a cancelled job cost nothing (0): no upstream saw it", async () => {
    const f = await jobFixture();
    const id = await f.submit();
    expect(await f.jobs.cancel(id, Date.now())).toBe(true);
    expect((await f.jobs.get(id))!.cost_usd_micro).toBe(0n);
  });
});
