import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "@fal-ai/client";
import { startFunded } from "../helpers/api.ts";
import { falClientFor } from "../helpers/fal.ts";

/**
 * fal.stream of the real @fal-ai/client (1.10.1) against gengate. The client posts to
 * `https://fal.run/<model>/stream` with `Accept: text/event-stream` (node_modules/@fal-ai/client/
 * src/streaming.js, FalStream.start: dispatchRequest with resolveEndpointPath(..., "/stream")),
 * takes every SSE event's JSON as a stream value, resolves done() with the last one when the HTTP
 * stream ends, and emits "error" (rejecting done()) on a non-2xx answer or a broken stream.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof falClientFor>;
const sent: string[] = [];

const clientFor = (key: string) => falClientFor(s.url, key, sent);

beforeAll(async () => {
  s = await startFunded();
  fal = clientFor(s.defaultKey!);
});
afterAll(() => s.cleanup());

const balance = async () =>
  BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);
const estimate = async (model_id: string, input: Record<string, unknown>) =>
  BigInt(
    ((await (await s.post("/v1/estimate", { model_id, input })).json()) as { price_usd_micro: string })
      .price_usd_micro,
  );
const listed = async (id: string) => {
  const page = (await (await s.get("/v1/requests?limit=50")).json()) as { data: { request_id: string }[] };
  return page.data.some((r) => r.request_id === id);
};

describe("fal.stream against gengate", () => {
  test("yields fal's status events, then the output; done() resolves to the output; charged the estimate", async () => {
    const input = { prompt: "a fox", width: 80, height: 64, num_images: 2, sandbox: { delay_ms: 300 } };
    const price = await estimate("sandbox/image", input);
    const before = await balance();
    const stream = await fal.stream("sandbox/image", { input });
    const events: Record<string, unknown>[] = [];
    for await (const ev of stream) events.push(ev as Record<string, unknown>);
    const output = (await stream.done()) as { images: { url: string; width: number; height: number }[] };

    expect(sent).toContain("POST /v1/run/sandbox/image/stream");
    expect(stream.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const statuses = events.filter((e) => "status" in e).map((e) => e.status);
    expect(statuses[0]).toMatch(/^(IN_QUEUE|IN_PROGRESS)$/);
    expect(statuses.at(-1)).toBe("COMPLETED");
    expect(events.at(-1)).toEqual(output);
    expect(output.images).toHaveLength(2);
    const png = await fetch(output.images[0]!.url);
    expect(png.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await png.arrayBuffer());
    const view = new DataView(bytes.buffer);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([80, 64]); // IHDR width, height

    expect(before - (await balance())).toBe(price);
    expect(await listed(stream.requestId!)).toBe(true);
  });

  test('the value forms of fal\'s clients: duration "3s" is charged as 3', async () => {
    const price = await estimate("sandbox/speech", { text: "hi", duration: 3 });
    expect(await estimate("sandbox/speech", { text: "hi", duration: "3s" })).toBe(price);
    const before = await balance();
    const stream = await fal.stream("sandbox/speech", { input: { text: "hi", duration: "3s" } });
    const output = (await stream.done()) as { audio: { url: string; content_type: string } };
    expect(output.audio.content_type).toBe("audio/wav");
    expect(before - (await balance())).toBe(price);
  });

  test("a failed job: the stream ends with an error event and the client raises its ApiError, caught; nothing charged", async () => {
    const before = await balance();
    const events: Record<string, unknown>[] = [];
    let caught: unknown;
    try {
      const stream = await fal.stream("sandbox/image", {
        input: { prompt: "boom", sandbox: { fail: true } },
      });
      stream.on("data", (ev) => events.push(ev as Record<string, unknown>));
      await stream.done();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    const last = events.at(-1) as { status: string; detail: string; error_type: string; request_id: string };
    expect(last.status).toBe("FAILED");
    expect(last.error_type).toBe("generation_failed");
    expect(last.detail).toContain("sandbox.fail");
    expect((caught as ApiError<unknown>).requestId).toBe(last.request_id);
    expect(await balance()).toBe(before);
    const plain = (await (await s.get(`/v1/requests/${last.request_id}/status`)).json()) as {
      status: string;
    };
    expect(plain.status).toBe("FAILED");
  });

  test("a failed job read with for await: under Promise.all with done(), the rejection is caught", async () => {
    const events: { status?: string }[] = [];
    let caught: unknown;
    try {
      const stream = await fal.stream("sandbox/speech", { input: { text: "boom", sandbox: { fail: true } } });
      // done() is taken before the loop runs: the client rejects it the moment the error arrives.
      await Promise.all([
        stream.done(),
        (async () => {
          for await (const ev of stream) events.push(ev as { status?: string });
        })(),
      ]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(events.at(-1)?.status).toBe("FAILED");
  });

  test("402: a key without the balance gets the client's ApiError naming the billing page, caught", async () => {
    const res = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "poor", credit: "0.01" }),
    });
    const poor = clientFor(((await res.json()) as { key: string }).key);
    let caught: unknown;
    try {
      const stream = await poor.stream("sandbox/video", { input: { prompt: "a long film", duration: 10 } });
      await stream.done();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    const e = caught as ApiError<{ detail: string; error_type: string; error: { code: string } }>;
    expect(e.status).toBe(402);
    expect(e.body.error.code).toBe("insufficient_balance");
    expect(e.body.error_type).toBe("insufficient_balance");
    expect(e.body.detail).toContain("/console/billing");
    expect(e.message).toBe(e.body.detail);
  });
});
