import { afterAll, describe, expect, test } from "bun:test";
import { pollUntil } from "../../helpers/api.ts";
import { finalJob, submitQueued } from "../../helpers/context.ts";
import { png } from "../media-fixtures.ts";
import { cogGateway, runCogDirect } from "./helpers.ts";

const g = await cogGateway();
afterAll(async () => await g.stop());

/** Until the job's log says it went back to the queue for a busy upstream. */
async function busyRetry(id: string) {
  await pollUntil(
    async () => (await g.t.ctx.jobLogs.list(id)).map((l) => l.message),
    (lines) => lines.some((l) => l.startsWith("upstream busy: retrying")),
    10_000,
  );
}

describe("cog provider", () => {
  test("a job completes through cog's webhook: a data: URL image, charged once, one prediction", async () => {
    const id = await submitQueued(g.t, "box/img", { prompt: "a fox" });
    const job = await finalJob(g.t.ctx, id);
    expect(job.status).toBe("COMPLETED");
    expect(job.upstream_id).toBe(id); // the prediction id is the request id
    expect(g.cog.started().filter((p) => p === id)).toEqual([id]);
    // Only the final event was asked for (webhook_events_filter), and it was delivered once.
    expect(g.cog.delivered(id)).toEqual(["completed"]);
    expect((await g.recorded(id))?.provider).toBe("box");
    expect(await g.money(id)).toEqual({ status: "settled", charged: 3000n, chargeEntries: 1 });
    const out = await g.t.request(`/v1/requests/${id}/response`);
    const body = (await out.json()) as { images: { url: string; content_type: string; width: number }[] };
    expect(body.images).toHaveLength(1);
    expect(body.images[0]!.content_type).toBe("image/png");
    expect(body.images[0]!.width).toBe(16);
    // The cog server's log lines are the job's (as Replicate's are).
    const logs = (await g.t.ctx.jobLogs.list(id)).map((l) => l.message);
    expect(logs).toContain(`cog prediction ${id} created`);
    expect(logs).toContain("done");
  });

  test("409 busy with another prediction backs off and then completes, started once", async () => {
    g.cog.hold();
    expect(await g.cog.occupy("other_client_1")).toBe(202);
    g.cog.health = "READY"; // the slot was taken between the health check and the PUT
    try {
      const creates = g.cog.creates();
      const id = await submitQueued(g.t, "box/img", { prompt: "a cat" });
      await busyRetry(id);
      expect(g.cog.creates()).toBeGreaterThan(creates); // the PUT itself was answered 409
      expect((await g.t.ctx.jobs.get(id))!.status).toBe("IN_QUEUE"); // requeued, not failed
      expect(g.cog.started()).not.toContain(id);
      g.cog.release(); // the other prediction ends; the retry gets the slot
      const job = await finalJob(g.t.ctx, id);
      expect(job.status).toBe("COMPLETED");
      expect(g.cog.started().filter((p) => p === id)).toEqual([id]);
      expect(await g.money(id)).toEqual({ status: "settled", charged: 3000n, chargeEntries: 1 });
    } finally {
      g.cog.health = null;
    }
  });

  test("a BUSY health check backs off without sending the PUT", async () => {
    g.cog.hold();
    expect(await g.cog.occupy("other_client_2")).toBe(202);
    const creates = g.cog.creates();
    const id = await submitQueued(g.t, "box/img", { prompt: "a dog" });
    await busyRetry(id);
    expect(g.cog.creates()).toBe(creates);
    g.cog.release();
    expect((await finalJob(g.t.ctx, id)).status).toBe("COMPLETED");
    expect(g.cog.started().filter((p) => p === id)).toEqual([id]);
  });

  test("the job's time limit cancels the cog prediction and releases the hold", async () => {
    g.cog.hold();
    try {
      const id = await submitQueued(g.t, "box/slow", { prompt: "slow" });
      const job = await finalJob(g.t.ctx, id);
      expect(job.status).toBe("FAILED");
      expect(job.error_message).toContain("time limit");
      expect(g.cog.cancels()).toContain(id);
      expect(g.cog.running()).not.toContain(id);
      expect(await g.money(id)).toEqual({ status: "released", charged: 0n, chargeEntries: 0 });
    } finally {
      g.cog.release();
    }
  });

  test("a synchronous cog answer (200, no webhook) completes the job too", async () => {
    // A server that ignored Prefer: respond-async answers the final prediction at once.
    const id = "01a21e28-0000-7000-8000-000000000001";
    const image = `data:image/png;base64,${Buffer.from(png(8, 8)).toString("base64")}`;
    const sync = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => Response.json({ id, status: "succeeded", output: [image] }),
    });
    try {
      const { run, recordedIds: ids } = runCogDirect({
        baseUrl: `http://127.0.0.1:${sync.port}`,
        model: g.t.ctx.catalog.get("box/img")!,
        id,
        callback: {
          url: () => "http://gengate.test/x",
          recorded: async () => null,
          wait: () => new Promise(() => {}),
        },
      });
      const result = await run;
      expect(ids).toEqual([id]);
      expect(result.outputs).toHaveLength(1);
      expect(result.outputs[0]!.contentType).toBe("image/png");
    } finally {
      sync.stop(true);
    }
  });
});
