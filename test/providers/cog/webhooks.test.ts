import { describe, expect, test } from "bun:test";
import { UpstreamCallbackStore } from "../../../src/providers/callback-store.ts";
import { CogWebhooks } from "../../../src/providers/cog/webhooks.ts";
import { makeTestApp } from "../../helpers/context.ts";

/**
 * Two instances over one database (as on PostgreSQL): the webhook reaches one, the worker waits on
 * the other, and reads the recorded answer from the table.
 */
const t = await makeTestApp();
const other = (pollMs: number) =>
  new CogWebhooks({
    store: new UpstreamCallbackStore(t.ctx.sql),
    signer: t.ctx.signer,
    publicUrl: () => "http://gengate.test",
    pollMs,
  });

describe("cog webhooks across instances", () => {
  test("a webhook received by another instance completes the wait within its poll", async () => {
    const job = "01a21e28-0000-7000-8000-0000000000a1";
    const waiter = other(50); // the waiting worker's instance
    const waiting = waiter.forJob("box", job).wait(new AbortController().signal);
    await Bun.sleep(30);
    const at = performance.now();
    expect(await t.ctx.cogWebhooks.receive("box", job, { id: job, status: "succeeded", output: "x" })).toBe(
      "recorded",
    );
    expect(await waiting).toEqual({ id: job, status: "succeeded", output: "x" });
    expect(performance.now() - at).toBeLessThan(500);
  });

  test("the receiving instance wakes its own waiter at once, not at the next poll", async () => {
    const job = "01a21e28-0000-7000-8000-0000000000a2";
    const slow = other(60_000);
    const waiting = slow.forJob("box", job).wait(new AbortController().signal);
    await Bun.sleep(30);
    const at = performance.now();
    await slow.receive("box", job, { id: job, status: "failed", error: "e" });
    expect(((await waiting) as { status: string }).status).toBe("failed");
    expect(performance.now() - at).toBeLessThan(500);
  });

  test("start, output and logs events are dropped; the provider name scopes the record; abort ends the wait", async () => {
    const job = "01a21e28-0000-7000-8000-0000000000a3";
    expect(await t.ctx.cogWebhooks.receive("box", job, { id: job, status: "processing" })).toBe("ignored");
    expect(await t.ctx.cogWebhooks.forJob("box", job).recorded()).toBeNull();
    await t.ctx.cogWebhooks.receive("box", job, { id: job, status: "canceled" });
    expect(await t.ctx.cogWebhooks.forJob("other", job).recorded()).toBeNull();
    const controller = new AbortController();
    const waiting = t.ctx.cogWebhooks.forJob("other", job).wait(controller.signal);
    controller.abort(new Error("deadline"));
    await expect(waiting).rejects.toThrow("deadline");
  });
});
