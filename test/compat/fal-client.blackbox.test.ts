import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "@fal-ai/client";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { falClientFor } from "../helpers/fal.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof falClientFor>;
/** Every request the client sent, as "METHOD path". */
const sent: string[] = [];
let otherKey = "";
beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  // The official client talks to queue.fal.run and rest.fal.ai (storage); point both at this gateway.
  fal = falClientFor(s.url, s.defaultKey!, sent);
  const other = await fetch(`${s.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "other", credit: "5" }),
  });
  otherKey = ((await other.json()) as { key: string }).key;
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

  test("a failing job ends the client's wait at once: one result read, no retries", async () => {
    let error: unknown;
    let requestId = "";
    try {
      await fal.subscribe("sandbox/image", {
        input: { prompt: "boom", sandbox: { fail: true } },
        pollInterval: 50,
        onEnqueue: (id) => {
          requestId = id;
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    const e = error as ApiError<{ error: { code: string }; detail: string; error_type: string }>;
    // 500, as fal answers a request whose app raised: QUEUE_RETRY_CONFIG retries 429/502/503/504 only.
    expect(e.status).toBe(500);
    expect(e.requestId).toBe(requestId);
    expect(e.body.error.code).toBe("generation_failed");
    expect(e.body.error_type).toBe("generation_failed");
    const reads = sent.filter((l) => l === `GET /v1/queue/sandbox/image/requests/${requestId}`);
    expect(reads.length).toBe(1);
  });

  test("fal.run of a failing model throws once: the job is not submitted again", async () => {
    const before = sent.filter((l) => l === "POST /v1/run/sandbox/image").length;
    let error: unknown;
    try {
      await fal.run("sandbox/image", { input: { prompt: "boom", sandbox: { fail: true } } });
    } catch (e) {
      error = e;
    }
    expect((error as ApiError<unknown>).status).toBe(500);
    expect(sent.filter((l) => l === "POST /v1/run/sandbox/image").length).toBe(before + 1);
  });

  test("queue.cancel of a running job throws at once; the job ends normally", async () => {
    const { request_id } = await fal.queue.submit("sandbox/image", {
      input: { prompt: "runs", sandbox: { delay_ms: 800 } },
    });
    await pollUntil(
      () => fal.queue.status("sandbox/image", { requestId: request_id }),
      (st) => st.status === "IN_PROGRESS",
    );
    let error: unknown;
    try {
      await fal.queue.cancel("sandbox/image", { requestId: request_id });
    } catch (e) {
      error = e;
    }
    expect((error as ApiError<{ status: string }>).status).toBe(400);
    expect((error as ApiError<{ status: string }>).body.status).toBe("IN_PROGRESS");
    await fal.queue.subscribeToStatus("sandbox/image", { requestId: request_id, pollInterval: 50 });
    const result = await fal.queue.result("sandbox/image", { requestId: request_id });
    expect((result.data as { images: unknown[] }).images.length).toBe(1);
  });

  test("storage.upload lands in gengate's file store and its URL works as a model input", async () => {
    const png = encodePng(48, 32, 5);
    const url = await fal.storage.upload(new Blob([png], { type: "image/png" }));
    const m = new RegExp(`^${s.url}/v1/files/(file_[0-9A-Za-z]{24})/content$`).exec(url);
    expect(m).not.toBeNull();
    // The same file as POST /v1/files would have stored, in the key's account.
    const meta = (await (await s.get(`/v1/files/${m![1]}`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ content_type: "image/png", size: png.byteLength, width: 48, height: 32 });
    const bytes = new Uint8Array(await (await s.get(`/v1/files/${m![1]}/content`)).arrayBuffer());
    expect(Buffer.from(bytes).equals(Buffer.from(png))).toBe(true);
    // As a model input the URL is the file id: same account check, priced on the measured size.
    const result = await fal.subscribe("sandbox/upscale", {
      input: { image_url: url, scale: 2 },
      pollInterval: 50,
    });
    const record = (await (await s.get(`/v1/requests/${result.requestId}`)).json()) as {
      status: string;
      input: { image_url: string };
      price: { quoted_usd_micro: string };
    };
    expect(record.status).toBe("COMPLETED");
    expect(record.input.image_url).toBe(m![1]!);
    const byId = (await (
      await s.post("/v1/queue/sandbox/upscale", { image_url: m![1], scale: 2 })
    ).json()) as { quoted_usd_micro: string };
    expect(record.price.quoted_usd_micro).toBe(byId.quoted_usd_micro);
    // Another account cannot use the link.
    const other = await s.post("/v1/queue/sandbox/upscale", { image_url: url, scale: 2 }, { key: otherKey });
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("unknown_file");
  });

  test("Blob inputs are uploaded through the same protocol by submit", async () => {
    const result = await fal.subscribe("sandbox/upscale", {
      input: { image_url: new Blob([encodePng(20, 10, 3)], { type: "image/png" }), scale: 2 },
      pollInterval: 50,
    });
    const record = (await (await s.get(`/v1/requests/${result.requestId}`)).json()) as {
      input: { image_url: string };
    };
    expect(record.input.image_url).toMatch(/^file_[0-9A-Za-z]{24}$/);
  });

  test("storage.upload refuses what POST /v1/files refuses", async () => {
    // A PNG label on bytes that are not a PNG: the magic bytes decide.
    let error: unknown;
    try {
      await fal.storage.upload(
        new Blob([new TextEncoder().encode("<html>not an image</html>")], { type: "image/png" }),
      );
    } catch (e) {
      error = e;
    }
    expect((error as ApiError<{ error: { code: string } }>).status).toBe(415);
    // A type the store does not take is refused at initiate.
    error = undefined;
    try {
      await fal.storage.upload(new Blob(["plain"], { type: "text/plain" }));
    } catch (e) {
      error = e;
    }
    expect((error as ApiError<{ error: { code: string } }>).status).toBe(415);
  });

  test("402 on submit: the client's ApiError says where to top up (fal's detail and message)", async () => {
    const res = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "poor", credit: "0.001" }),
    });
    const poor = falClientFor(s.url, ((await res.json()) as { key: string }).key);
    let error: unknown;
    try {
      await poor.subscribe("sandbox/image", { input: { prompt: "p" }, pollInterval: 50 });
    } catch (e) {
      error = e;
    }
    const e = error as ApiError<{ detail: string; error: { code: string } }>;
    expect(e.status).toBe(402);
    expect(e.body.error.code).toBe("insufficient_balance");
    expect(e.body.detail).toContain("/console/billing");
    expect(e.message).toBe(e.body.detail);
  });
});
