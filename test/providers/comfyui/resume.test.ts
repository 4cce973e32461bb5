import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { createComfyProvider } from "../../../src/providers/comfyui/index.ts";
import { ShutdownError } from "../../../src/providers/types.ts";
import { recoverJobs } from "../../../src/queue/recovery.ts";
import { pollUntil } from "../../helpers/api.ts";
import { finalJob, submitQueued, testWorkerPool } from "../../helpers/context.ts";
import { comfyApp, fakeJob, rejection, settings } from "./helpers.ts";
import { startMockComfy } from "./mock-comfy.ts";

/**
 * Issue 31, item 11. The prompt id used to be known only from ComfyUI's answer to POST /prompt, so a
 * gateway that died (or lost the connection) between the submit and that answer had nothing to
 * resume: the job was failed, or queued a second time on ComfyUI. The id is now chosen by the
 * gateway and recorded on the job before the submit; ComfyUI takes a client's `prompt_id`
 * (server.py `post_prompt`, comfyanonymous/ComfyUI: `prompt_id = str(json_data.get("prompt_id",
 * uuid.uuid4()))`), and so does the mock.
 */
const mock = startMockComfy();
mock.slowMs = 0;
afterAll(() => mock.stop());
afterEach(() => {
  mock.fault = null;
  mock.ignoresPromptId = false;
  mock.prompts.length = 0;
  mock.requests.length = 0;
  mock.deleted.length = 0;
});
const provider = () => createComfyProvider("comfy", settings(mock.url));
const posts = () => mock.requests.filter((r) => r === "POST /prompt").length;
const waitFor = async (cond: () => boolean) => {
  for (let i = 0; i < 400 && !cond(); i++) await Bun.sleep(5);
  expect(cond()).toBe(true);
};

describe("comfyui: the prompt id is chosen before the submit", () => {
  test("a crash between the submit and its answer: the next attempt finds the prompt by its id, never queues it again", async () => {
    mock.fault = "prompt-hang";
    const first = fakeJob({ prompt: "x" });
    const running = provider().run(first);
    await waitFor(() => mock.prompts.length === 1);
    first.controller.abort(new ShutdownError("shutting down")); // the process goes down here
    await rejection(running);
    const queued = mock.prompts[0]!.id;
    expect(first.upstreamIds).toEqual([`submitting:${queued}`]);

    mock.fault = null;
    const next = fakeJob({ prompt: "x" }, { upstreamId: first.upstreamIds[0]! });
    expect(provider().resumable(next)).toBe(true);
    const result = await provider().run(next);
    expect(result.outputs[0]!.bytes).toEqual(mock.png);
    expect(posts()).toBe(1);
    expect(mock.prompts).toHaveLength(1);
    expect(next.upstreamIds).toEqual([queued]);
  });

  test("a submit ComfyUI refused (503) is sent again, under the same id", async () => {
    mock.fault = "503";
    const first = fakeJob({ prompt: "x" });
    expect((await rejection(provider().run(first))).kind).toBe("capacity");
    expect(first.upstreamIds).toHaveLength(1);
    const chosen = first.upstreamIds[0]!.slice("submitting:".length);

    mock.fault = null;
    const next = fakeJob({ prompt: "x" }, { upstreamId: first.upstreamIds[0]! });
    await provider().run(next);
    expect(posts()).toBe(2);
    expect(mock.prompts.map((p) => p.id)).toEqual([chosen]);
    expect(next.upstreamIds).toEqual([`submitting:${chosen}`, chosen]);
  });

  test("a time limit during the submit cancels the prompt under the chosen id", async () => {
    mock.fault = "prompt-hang";
    const job = fakeJob({ prompt: "x" });
    const running = provider().run(job);
    await waitFor(() => mock.prompts.length === 1);
    job.controller.abort(new Error("time limit"));
    await rejection(running);
    expect(mock.deleted).toEqual([mock.prompts[0]!.id]);
  });

  test("an older ComfyUI that mints its own id: the id of its answer is recorded", async () => {
    mock.ignoresPromptId = true;
    const job = fakeJob({ prompt: "x" });
    await provider().run(job);
    const minted = mock.prompts[0]!.id;
    expect(job.upstreamIds).toHaveLength(2);
    expect(job.upstreamIds[0]).not.toBe(`submitting:${minted}`);
    expect(job.upstreamIds[1]).toBe(minted);
  });
});

describe("comfyui: resume through the queue", () => {
  test("a job whose worker died waiting for the submit's answer completes on the next start, queued once, charged once", async () => {
    const t = await comfyApp(mock.url, "sdxl");
    mock.fault = "prompt-hang";
    const before = testWorkerPool(t.ctx);
    const id = await submitQueued(t, "c/sdxl", { prompt: "x" });
    await waitFor(() => mock.prompts.length === 1);
    // Recorded durably before the submit left.
    const recorded = await pollUntil(
      async () => (await t.ctx.jobs.get(id))!,
      (j) => j.upstream_id !== null,
    );
    expect(recorded.upstream_id).toBe(`submitting:${mock.prompts[0]!.id}`);
    await before.stop(0); // the worker is gone; the job stays IN_PROGRESS
    expect((await t.ctx.jobs.get(id))!.status).toBe("IN_PROGRESS");

    mock.fault = null;
    expect(await recoverJobs(t.ctx, t.ctx.providers, Date.now(), true)).toEqual({
      requeued: 1,
      failed: 0,
    });
    const after = testWorkerPool(t.ctx);
    try {
      const job = await finalJob(t.ctx, id);
      expect(job.error_message).toBeNull();
      expect(job.status).toBe("COMPLETED");
      expect(job.upstream_id).toBe(mock.prompts[0]!.id);
      expect(posts()).toBe(1);
      const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
      expect(hold.status).toBe("settled");
      expect(hold.charged_usd_micro).toBe(1000n);
    } finally {
      await after.stop(1000);
    }
  });
});
