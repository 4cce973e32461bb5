import { afterAll, describe, expect, test } from "bun:test";
import { setLogSink } from "../../../src/lib/log.ts";
import { pollUntil } from "../../helpers/api.ts";
import { finalJob, submitQueued } from "../../helpers/context.ts";
import { cogGateway, runCogDirect } from "./helpers.ts";
import { startStandInCog } from "./stand-in-cog.ts";

const g = await cogGateway();
// A cog server that cannot be reached: nothing listens on this port.
const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
const closedPort = closed.port!;
const closedUrl = `http://127.0.0.1:${closedPort}`;
closed.stop(true);
const down = await cogGateway({ baseUrl: closedUrl });
afterAll(async () => {
  await g.stop();
  await down.stop();
});

describe("cog provider errors", () => {
  test("422 (the model's input validation) fails the job and releases the hold, no upstream words", async () => {
    // This test's own capture of the log (whatever sink another file of the run left in place).
    const lines: string[] = [];
    const restore = setLogSink((l) => {
      lines.push(l);
      restore(l);
    });
    try {
      await input422(lines);
    } finally {
      setLogSink(restore);
    }
  });

  async function input422(lines: string[]) {
    const id = await submitQueued(g.t, "box/img", { not_prompt: "x" });
    const job = await finalJob(g.t.ctx, id);
    expect(job.status).toBe("FAILED");
    expect(job.error_message).toBe("cog refused the prediction's input.");
    expect(await g.money(id)).toEqual({ status: "released", charged: 0n, chargeEntries: 0 });
    expect(g.cog.started()).not.toContain(id);
    // cog's own words are in the operator's log, under the request id (written beside the job's
    // failure, which finalJob may see first: waited for, not assumed).
    const line = await pollUntil(
      async () => lines.find((l) => l.includes('"upstream error"') && l.includes(id)),
      (l) => l !== undefined,
    );
    expect(line).toContain("Field required");
    expect(line).toContain('"status":422');
  }

  test("a failed prediction fails the job with our message; the model's error stays in the log", async () => {
    const id = await submitQueued(g.t, "box/img", {
      prompt: "x",
      fail: "CUDA out of memory at /srv/private/model.py",
    });
    const job = await finalJob(g.t.ctx, id);
    expect(job.status).toBe("FAILED");
    expect(job.error_message).toBe(`The cog prediction ${id} failed.`);
    expect(job.error_message).not.toContain("CUDA");
    expect(await g.money(id)).toEqual({ status: "released", charged: 0n, chargeEntries: 0 });
    expect(g.cog.started().filter((p) => p === id)).toHaveLength(1);
  });

  test("an output that is no media fails the job, nothing charged", async () => {
    const id = await submitQueued(g.t, "box/img", {
      prompt: "x",
      mock_output: `data:image/png;base64,${Buffer.from("not a png at all").toString("base64")}`,
    });
    const job = await finalJob(g.t.ctx, id);
    expect(job.status).toBe("FAILED");
    expect(job.error_message).toBe("cog's output #1 is a data: URL that holds no known image format.");
    expect(await g.money(id)).toEqual({ status: "released", charged: 0n, chargeEntries: 0 });
  });

  test("a cog server that cannot be reached received nothing: the job waits in the queue, then runs once", async () => {
    const id = await submitQueued(down.t, "box/img", { prompt: "x" });
    await pollUntil(
      async () => (await down.t.ctx.jobLogs.list(id)).map((l) => l.message),
      (lines) => lines.some((l) => l.startsWith("upstream busy: retrying")),
      10_000,
    );
    expect((await down.t.ctx.jobs.get(id))!.upstream_id).toBeNull();
    const late = startStandInCog({ port: closedPort, webhookOrigin: down.gatewayUrl });
    try {
      const job = await finalJob(down.t.ctx, id);
      expect(job.status).toBe("COMPLETED");
      expect(late.started()).toEqual([id]);
      expect(await down.money(id)).toEqual({ status: "settled", charged: 3000n, chargeEntries: 1 });
    } finally {
      late.stop();
    }
  });

  test("a server whose setup failed fails the job without a PUT", async () => {
    g.cog.health = "SETUP_FAILED";
    try {
      const creates = g.cog.creates();
      const id = await submitQueued(g.t, "box/img", { prompt: "x" });
      const job = await finalJob(g.t.ctx, id);
      expect(job.status).toBe("FAILED");
      expect(job.error_message).toBe("The cog server cannot run predictions.");
      expect(g.cog.creates()).toBe(creates);
      expect(await g.money(id)).toEqual({ status: "released", charged: 0n, chargeEntries: 0 });
    } finally {
      g.cog.health = null;
    }
  });

  test("a create whose answer is lost fails the job and is never sent again", async () => {
    // The server took the PUT and dropped the connection: the prediction may run; a resend could run it twice.
    let puts = 0;
    const dropper = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, server) => {
        if (req.method === "GET") return Response.json({ status: "READY" });
        puts++;
        server.timeout(req, 1);
        return new Promise<Response>(() => {});
      },
    });
    try {
      const { run, recordedIds } = runCogDirect({
        baseUrl: `http://127.0.0.1:${dropper.port}`,
        model: g.t.ctx.catalog.get("box/img")!,
        id: "01a21e28-0000-7000-8000-0000000000d1",
        callback: g.t.ctx.cogWebhooks.forJob("box", "01a21e28-0000-7000-8000-0000000000d1"),
      });
      await expect(run).rejects.toThrow(
        "cog's answer to the create was lost; not retried, since the prediction may be running.",
      );
      expect(puts).toBe(1);
      expect(recordedIds).toEqual([]);
    } finally {
      dropper.stop(true);
    }
  });

  test("a resumed job whose prediction is gone and left no webhook is never PUT again; its time limit cancels", async () => {
    // As after a restart: the job holds its prediction id, cog no longer knows it, nothing was recorded.
    const before = g.cog.started().length;
    const lost = "01a21e28-0000-7000-8000-00000000dead";
    const { run, controller, recordedIds } = runCogDirect({
      baseUrl: g.cog.url,
      model: g.t.ctx.catalog.get("box/img")!,
      id: lost,
      upstreamId: lost,
      callback: g.t.ctx.cogWebhooks.forJob("box", lost),
    });
    await Bun.sleep(1500); // more than one read of the record (once a second)
    controller.abort(new Error("time limit"));
    await expect(run).rejects.toThrow("time limit");
    expect(g.cog.started().length).toBe(before); // nothing created
    expect(recordedIds).toEqual([]);
    expect(g.cog.cancels()).toContain(lost); // the cancel is sent (cog answers 404: not running)
  });
});
