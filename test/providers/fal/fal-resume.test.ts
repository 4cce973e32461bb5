import { afterAll, describe, expect, test } from "bun:test";
import { createFalProvider } from "../../../src/providers/fal/index.ts";
import { recoverJobs } from "../../../src/queue/recovery.ts";
import { pollUntil } from "../../helpers/api.ts";
import { json, makeTestApp, testWorkerPool } from "../../helpers/context.ts";
import { png } from "../media-fixtures.ts";
import { settings } from "./helpers.ts";
import { startMockFal } from "./mock-fal.ts";

/**
 * A fal job interrupted by a shutdown and resumed by the next start, through the real worker pool
 * and job store: fal answers every log line so far on each poll, and the job's log shows each once
 * (docs/providers/fal.md "Restarts and retries").
 */
const fal = startMockFal();
const t = await makeTestApp({
  models: [
    {
      id: "f/img",
      kind: "image",
      provider: "fal",
      upstream_model: "fal-ai/img",
      price_usd_micro: 1000,
      max: 1,
    },
  ],
  providers: { fal: { type: "fal", base_url: fal.url } },
});
await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
t.ctx.providers.set("fal", createFalProvider("fal", settings(fal.url, fal.key)));
afterAll(() => fal.stop());

describe("fal: a resumed job's log", () => {
  test("lines forwarded before the restart appear once after it", async () => {
    fal.on("fal-ai/img", {
      progressPolls: 40,
      logs: ["loading weights", "step 1", "step 2"],
      result: { images: [{ url: `data:image/png;base64,${Buffer.from(png(8, 8)).toString("base64")}` }] },
    });
    const res = await t.request("/v1/queue/f/img", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x" }),
    });
    const id = (await json<{ request_id: string }>(res)).request_id;
    const lines = async () => (await t.ctx.jobLogs.list(id)).map((l) => l.message);

    const first = testWorkerPool(t.ctx);
    await pollUntil(lines, (l) => l.includes("fal: step 2"), 10_000);
    await first.stop(0); // a shutdown: the job stays IN_PROGRESS, the request keeps running on fal
    expect((await t.ctx.jobs.get(id))!.status).toBe("IN_PROGRESS");

    expect(await recoverJobs(t.ctx, t.ctx.providers, Date.now(), true)).toEqual({
      requeued: 1,
      failed: 0,
    });
    const second = testWorkerPool(t.ctx);
    const job = await pollUntil(
      async () => (await t.ctx.jobs.get(id))!,
      (j) => j.status === "COMPLETED" || j.status === "FAILED",
      20_000,
    );
    await second.stop(1000);
    expect(job.status).toBe("COMPLETED");
    const log = await lines();
    expect(log).toContain(`fal: resuming request ${job.upstream_id}`);
    for (const line of ["fal: loading weights", "fal: step 1", "fal: step 2"]) {
      expect(log.filter((l) => l === line)).toEqual([line]);
    }
    expect(fal.callsTo("submit", "fal-ai/img")).toHaveLength(1);
  });
});
