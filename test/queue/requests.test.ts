import { afterAll, describe, expect, test } from "bun:test";
import { listRequests, requestDetail } from "../../src/queue/requests.ts";
import { finalJob, makeTestApp, submitQueued, testWorkerPool } from "../helpers/context.ts";

const t = await makeTestApp();
const { ctx } = t;
await ctx.ledger.topUp(t.account.id, 100_000_000n, null);
const ci = await ctx.accounts.createKey(t.account.id, { name: "ci" });

const submit = (model: string, input: Record<string, unknown>, key = t.key) =>
  submitQueued(t, model, input, key);
const finalOf = (id: string) => finalJob(ctx, id);

// A queued job cancelled before any worker runs, then work for the pool.
const cancelled = await submit("sandbox/speech", { text: "hi", duration: 2 }, ci.key);
expect((await t.request(`/v1/requests/${cancelled}/cancel`, { method: "POST", key: ci.key })).status).toBe(
  200,
);
const pool = testWorkerPool(ctx, { concurrency: () => 1 });
afterAll(() => pool.stop(1000));
const image = await submit("sandbox/image", {
  prompt: "p",
  num_images: 2,
  width: 64,
  height: 64,
  sandbox: { delay_ms: 30 },
});
await finalOf(image);
const failed = await submit(
  "sandbox/video",
  { prompt: "p", duration: 2, resolution: "480p", sandbox: { fail: true } },
  ci.key,
);
await finalOf(failed);
const partial = await submit("sandbox/image", {
  prompt: "p",
  num_images: 3,
  width: 64,
  height: 64,
  sandbox: { actual_units: 1 },
});
await finalOf(partial);
const chat = await t.request("/v1/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    model: "sandbox/chat",
    messages: [{ role: "user", content: "hello there" }],
    max_tokens: 5,
  }),
});
expect(chat.status).toBe(200);
const chatId = (await ctx.jobs.list(t.account.id, { limit: 1, before: null }))[0]!.id;

describe("requests list", () => {
  test("every job of the account (media and chat), newest first, with key, status and price", async () => {
    const page = await listRequests(ctx, t.account.id);
    expect(page.items.map((r) => r.id)).toEqual([chatId, partial, failed, image, cancelled]);
    expect(page.next_cursor).toBeNull();
    const byId = new Map(page.items.map((r) => [r.id, r]));
    expect(byId.get(chatId)).toMatchObject({
      kind: "text",
      model_id: "sandbox/chat",
      status: "COMPLETED",
      source: "API",
    });
    expect(byId.get(cancelled)).toMatchObject({ status: "CANCELLED", key_id: ci.keyId, key_name: "ci" });
    expect(byId.get(cancelled)!.price.charged_micro).toBe(0n);
    expect(byId.get(failed)).toMatchObject({ status: "FAILED", error_code: expect.any(String) });
    const p = byId.get(partial)!.price;
    expect(p).toEqual({
      currency: "USD",
      quoted_usd_micro: 30_000n,
      reserved_micro: 30_000n,
      charged_micro: 10_000n,
    });
  });

  test("filters: key, model, status, source; and they combine", async () => {
    const ids = async (f: Parameters<typeof listRequests>[2]) =>
      (await listRequests(ctx, t.account.id, f)).items.map((r) => r.id);
    expect(await ids({ keyId: ci.keyId })).toEqual([failed, cancelled]);
    expect(await ids({ modelId: "sandbox/image" })).toEqual([partial, image]);
    expect(await ids({ status: "FAILED" })).toEqual([failed]);
    expect((await ids({ source: "API" })).length).toBe(5);
    expect(await ids({ source: "STUDIO" })).toEqual([]);
    expect(await ids({ keyId: t.keyId, modelId: "sandbox/image", status: "COMPLETED" })).toEqual([
      partial,
      image,
    ]);
    expect((await ids({ keyId: "", modelId: null, status: "", source: "" })).length).toBe(5);
  });

  test("cursor paging visits every request once, in order", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const p = await listRequests(ctx, t.account.id, { limit: 2, cursor });
      seen.push(...p.items.map((r) => r.id));
      cursor = p.next_cursor;
    } while (cursor);
    expect(seen).toEqual((await listRequests(ctx, t.account.id)).items.map((r) => r.id));
  });
});

describe("request detail", () => {
  test("input, timeline, price, outputs with fresh signed links that download", async () => {
    const d = await requestDetail(ctx, t.account.id, image);
    expect(d.input).toMatchObject({ prompt: "p", num_images: 2 });
    expect(d.status).toBe("COMPLETED");
    expect(d.key_name).toBe("Default");
    const events = d.timeline.map((e) => e.event);
    expect(events[0]).toBe("submitted");
    expect(events[1]).toBe("started");
    expect(events).toContain("log");
    expect(events[events.length - 1]).toBe("COMPLETED");
    expect([...d.timeline.map((e) => e.at)]).toEqual([...d.timeline.map((e) => e.at)].sort());
    expect(d.price).toMatchObject({
      currency: "USD",
      quoted_usd_micro: 20_000n,
      reserved_micro: 20_000n,
      charged_micro: 20_000n,
      charged_usd_micro: 20_000n,
      fx_rate_micro: null,
    });
    expect(d.outputs.map((o) => o.index)).toEqual([0, 1]);
    for (const o of d.outputs) {
      expect(o.content_type).toBe("image/png");
      expect(o.url).toMatch(/\/v1\/requests\/[0-9a-f-]+\/output\/\d\?exp=\d+&sig=/);
      const res = await t.request(new URL(o.url).pathname + new URL(o.url).search, { key: null });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(o.size);
    }
    expect(JSON.stringify(d.output)).toContain(d.outputs[0]!.url);
  });

  test("a failed request: its error on the timeline, nothing charged, no outputs", async () => {
    const d = await requestDetail(ctx, t.account.id, failed);
    expect(d.error).toMatchObject({ code: expect.any(String) });
    expect(d.timeline[d.timeline.length - 1]).toMatchObject({ event: "FAILED", message: expect.any(String) });
    expect(d.price.charged_micro).toBe(0n);
    expect(d.outputs).toEqual([]);
    expect(d.output).toBeNull();
  });

  test("a cancelled request never started; a chat call shows its token usage", async () => {
    const c = await requestDetail(ctx, t.account.id, cancelled);
    expect(c.timeline.map((e) => e.event)).toEqual(["submitted", "CANCELLED"]);
    expect(c.started_at).toBeNull();
    const chatDetail = await requestDetail(ctx, t.account.id, chatId);
    expect(chatDetail.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    });
    expect(chatDetail.price.charged_micro).toBeGreaterThan(0n);
  });
});
