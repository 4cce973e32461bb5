import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollUntil, startFunded } from "../helpers/api.ts";

type Json = Record<string, any>;
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 2 }\n[limits]\nrun_wait_seconds = 2\n");
});
afterAll(() => s.cleanup());

const status = async (id: string) => (await (await s.get(`/v1/requests/${id}/status`)).json()) as Json;
const finalOf = (id: string) =>
  pollUntil(
    () => status(id),
    (b) => ["COMPLETED", "FAILED", "CANCELLED"].includes(b.status),
  );

describe("submit -> IN_QUEUE -> IN_PROGRESS -> COMPLETED", () => {
  test("202 queued request, status, response with signed media URLs, record with the charge", async () => {
    const res = await s.post("/v1/queue/sandbox/image", {
      prompt: "a cat",
      num_images: 2,
      width: 96,
      height: 64,
    });
    expect(res.status).toBe(202);
    const q = (await res.json()) as Json;
    expect(q).toMatchObject({ status: "IN_QUEUE", model_id: "sandbox/image", quoted_usd_micro: "20000" });
    expect(q.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(q.status_url).toBe(`${s.url}/v1/requests/${q.request_id}/status`);
    expect(q.response_url).toBe(`${s.url}/v1/requests/${q.request_id}/response`);
    expect(q.cancel_url).toBe(`${s.url}/v1/requests/${q.request_id}/cancel`);
    expect(typeof q.queue_position).toBe("number");

    const done = await finalOf(q.request_id);
    expect(done.status).toBe("COMPLETED");
    expect(done.logs).toEqual([]);
    const withLogs = (await (await s.get(`/v1/requests/${q.request_id}/status?logs=1`)).json()) as Json;
    expect(withLogs.logs.length).toBeGreaterThan(0);

    const out = (await (await s.get(`/v1/requests/${q.request_id}/response`)).json()) as Json;
    expect(out.images.length).toBe(2);
    expect(out.images[0]).toMatchObject({ content_type: "image/png", width: 96, height: 64 });
    expect(out.images[0].url).toMatch(
      new RegExp(`^${s.url}/v1/requests/${q.request_id}/output/0\\?exp=\\d+&sig=[\\w-]+$`),
    );

    const rec = (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as Json;
    expect(rec.price).toMatchObject({
      currency: "USD",
      quoted_usd_micro: "20000",
      reserved_micro: "20000",
      charged_usd_micro: "20000",
    });
    expect(rec.output_urls.length).toBe(2);
    expect(rec.input).toEqual({ prompt: "a cat", num_images: 2, width: 96, height: 64 });
    expect(rec.source).toBe("API");
  });

  test("actual_units below the quote lowers the charge", async () => {
    const q = (await (
      await s.post("/v1/queue/sandbox/speech", { text: "hi", duration: 10, sandbox: { actual_units: 4 } })
    ).json()) as Json;
    await finalOf(q.request_id);
    const rec = (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as Json;
    expect(rec.price.quoted_usd_micro).toBe("50000");
    expect(rec.price.charged_usd_micro).toBe("20000");
    const out = (await (await s.get(`/v1/requests/${q.request_id}/response`)).json()) as Json;
    expect(out.audio).toMatchObject({ content_type: "audio/wav", duration: 4 });
  });
});

describe("FAILED releases the reservation and charges nothing", () => {
  test("sandbox.fail", async () => {
    const before = (await (await s.get("/v1/account")).json()) as Json;
    const q = (await (
      await s.post("/v1/queue/sandbox/video", { prompt: "x", duration: 3, sandbox: { fail: true } })
    ).json()) as Json;
    const done = await finalOf(q.request_id);
    expect(done.status).toBe("FAILED");
    expect(done.error.code).toBe("generation_failed");
    const rec = (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as Json;
    expect(rec.price.charged_usd_micro).toBe("0");
    const after = (await (await s.get("/v1/account")).json()) as Json;
    expect(after.balance_micro).toBe(before.balance_micro);
    expect(after.held_micro).toBe("0");
    const r = await s.get(`/v1/requests/${q.request_id}/response`);
    expect(r.status).toBe(409);
    expect(((await r.json()) as Json).error.code).toBe("request_not_ready");
  });
});

describe("cancel", () => {
  test("IN_QUEUE: 200 and the hold released; IN_PROGRESS and final: 409 not_cancellable", async () => {
    // Two workers: fill both with slow jobs, so a third waits IN_QUEUE.
    const slow: string[] = [];
    for (let i = 0; i < 2; i++)
      slow.push(
        (
          (await (
            await s.post("/v1/queue/sandbox/image", { prompt: "slow", sandbox: { delay_ms: 1500 } })
          ).json()) as Json
        ).request_id,
      );
    // Both running (the second worker's claim may come a moment later, e.g. on PostgreSQL).
    for (const id of slow)
      await pollUntil(
        () => status(id),
        (b) => b.status === "IN_PROGRESS",
      );
    const waiting = ((await (await s.post("/v1/queue/sandbox/image", { prompt: "waits" })).json()) as Json)
      .request_id;
    const st = await status(waiting);
    expect(st.status).toBe("IN_QUEUE");
    expect(st.queue_position).toBe(0);

    const inProgress = await s.post(`/v1/requests/${slow[0]}/cancel`, {});
    expect(inProgress.status).toBe(409);
    expect(((await inProgress.json()) as Json).error.code).toBe("not_cancellable");

    const c = await s.fetch(`/v1/requests/${waiting}/cancel`, { method: "PUT" });
    expect(c.status).toBe(200);
    expect(await c.json()).toEqual({ request_id: waiting, status: "CANCELLED" });
    const rec = (await (await s.get(`/v1/requests/${waiting}`)).json()) as Json;
    expect(rec.status).toBe("CANCELLED");
    expect(rec.price.charged_usd_micro).toBe("0");
    expect((await s.post(`/v1/requests/${waiting}/cancel`, {})).status).toBe(409);
    await finalOf(slow[0]!);
    expect((await s.post(`/v1/requests/${slow[0]}/cancel`, {})).status).toBe(409);
  });
});

describe("/run", () => {
  test("200 with the output when it finishes in time", async () => {
    const res = await s.post("/v1/run/sandbox/image", { prompt: "quick" });
    expect(res.status).toBe(200);
    const out = (await res.json()) as Json;
    expect(out.images[0].url).toContain("/output/0?exp=");
    expect(res.headers.get("x-fal-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("502 generation_failed with the request id when it fails", async () => {
    const res = await s.post("/v1/run/sandbox/image", { prompt: "x", sandbox: { fail: true } });
    expect(res.status).toBe(502);
    const e = ((await res.json()) as Json).error;
    expect(e.code).toBe("generation_failed");
    expect(e.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("202 with the queued request when still running after run_wait_seconds", async () => {
    const t0 = Date.now();
    const res = await s.post("/v1/run/sandbox/image", { prompt: "x", sandbox: { delay_ms: 4000 } });
    expect(res.status).toBe(202);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    const q = (await res.json()) as Json;
    expect(["IN_QUEUE", "IN_PROGRESS"]).toContain(q.status);
    expect((await finalOf(q.request_id)).status).toBe("COMPLETED");
  });
});

describe("status stream (SSE)", () => {
  test("one event per change, closed after the final state", async () => {
    const q = (await (
      await s.post("/v1/queue/sandbox/image", { prompt: "x", sandbox: { delay_ms: 300 } })
    ).json()) as Json;
    const res = await s.get(`/v1/requests/${q.request_id}/status/stream`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text(); // ends only when the server closes the stream
    const events = text
      .split("\n\n")
      .filter((e) => e.startsWith("event: status"))
      .map((e) => JSON.parse(e.split("data: ")[1]!));
    expect(events.at(-1)!.status).toBe("COMPLETED");
    const statuses = events.map((e) => e.status);
    expect(statuses).toContain("IN_PROGRESS");
    expect(new Set(statuses.map((x, i) => `${i}:${x}`)).size).toBe(statuses.length);
  });
});

describe("listing", () => {
  test("newest first, cursor pagination, filters, no input", async () => {
    const p1 = (await (await s.get("/v1/requests?limit=2")).json()) as Json;
    expect(p1.data.length).toBe(2);
    expect(p1.data[0].input).toBeUndefined();
    expect(p1.data[0].request_id > p1.data[1].request_id).toBe(true);
    const p2 = (await (await s.get(`/v1/requests?limit=2&cursor=${p1.next_cursor}`)).json()) as Json;
    expect(p2.data[0].request_id < p1.data[1].request_id).toBe(true);
    const failed = (await (await s.get("/v1/requests?status=FAILED")).json()) as Json;
    expect(failed.data.length).toBeGreaterThan(0);
    for (const r of failed.data) expect(r.status).toBe("FAILED");
    const speech = (await (await s.get("/v1/requests?model_id=sandbox/speech")).json()) as Json;
    for (const r of speech.data) expect(r.model_id).toBe("sandbox/speech");
  });
});
