import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError, createFalClient } from "@fal-ai/client";
import { startFunded } from "../helpers/api.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof createFalClient>;
beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  fal = createFalClient({
    credentials: s.defaultKey!,
    // The official client talks to queue.fal.run; point it at this gateway.
    requestMiddleware: async (req) => ({
      ...req,
      url: req.url.replace("https://queue.fal.run/", `${s.url}/v1/queue/`),
    }),
  });
});
afterAll(() => s.cleanup());

describe("@fal-ai/client against gengate", () => {
  test("subscribe: submit, poll, result", async () => {
    const logs: string[] = [];
    const result = await fal.subscribe("sandbox/image", {
      input: { prompt: "a fox", width: 64, height: 64 },
      logs: true,
      pollInterval: 50,
      onQueueUpdate: (u) => logs.push(u.status),
    });
    expect(result.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const data = result.data as { images: { url: string; content_type: string }[] };
    expect(data.images[0]!.content_type).toBe("image/png");
    const png = await fetch(data.images[0]!.url);
    expect(png.status).toBe(200);
    expect(logs).toContain("COMPLETED");
  });

  test("queue.submit / status / result", async () => {
    const { request_id } = await fal.queue.submit("sandbox/speech", {
      input: { text: "hello", duration: 2 },
    });
    let status = await fal.queue.status("sandbox/speech", { requestId: request_id, logs: true });
    while (status.status !== "COMPLETED") {
      await Bun.sleep(50);
      status = await fal.queue.status("sandbox/speech", { requestId: request_id, logs: true });
    }
    const result = await fal.queue.result("sandbox/speech", { requestId: request_id });
    expect((result.data as { audio: { content_type: string } }).audio.content_type).toBe("audio/wav");
    expect(result.requestId).toBe(request_id);
  });

  test("queue.cancel of a queued job, then the client sees it end", async () => {
    const slow = await fal.queue.submit("sandbox/image", {
      input: { prompt: "slow", sandbox: { delay_ms: 800 } },
    });
    const queued = await fal.queue.submit("sandbox/image", { input: { prompt: "waits" } });
    await fal.queue.cancel("sandbox/image", { requestId: queued.request_id });
    const st = (await fal.queue.status("sandbox/image", { requestId: queued.request_id })) as {
      status: string;
      error_type?: string;
    };
    expect(st.status).toBe("COMPLETED");
    expect(st.error_type).toBe("cancelled");
    const plain = (await (await s.get(`/v1/requests/${queued.request_id}/status`)).json()) as {
      status: string;
    };
    expect(plain.status).toBe("CANCELLED");
    await fal.queue.subscribeToStatus("sandbox/image", { requestId: slow.request_id, pollInterval: 50 });
  });

  test("streamStatus delivers updates until done", async () => {
    const { request_id } = await fal.queue.submit("sandbox/image", {
      input: { prompt: "stream", sandbox: { delay_ms: 300 } },
    });
    const stream = await fal.queue.streamStatus("sandbox/image", { requestId: request_id, logs: true });
    const seen: string[] = [];
    for await (const ev of stream) seen.push((ev as { status: string }).status);
    expect(seen.at(-1)).toBe("COMPLETED");
  });

  test("a failing job ends the client's wait with an error instead of polling forever", async () => {
    const started = Date.now();
    let error: unknown;
    try {
      await fal.subscribe("sandbox/image", {
        input: { prompt: "boom", sandbox: { fail: true } },
        pollInterval: 50,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError<{ error: { code: string } }>).status).toBe(502);
    expect((error as ApiError<{ error: { code: string } }>).body.error.code).toBe("generation_failed");
    // The client retries a 5xx result a few times with back-off, then gives up: it never polls forever.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
