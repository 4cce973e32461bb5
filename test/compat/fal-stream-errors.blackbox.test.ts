import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "@fal-ai/client";
import { startFunded } from "../helpers/api.ts";
import { falClientFor } from "../helpers/fal.ts";

/**
 * fal.stream's refusals: answered before any event, in fal's error shape (`detail`, `error_type`,
 * and `message`, which @fal-ai/client makes its ApiError's message: src/response.js,
 * defaultResponseHandler), with the contract's code and status inside. The client is read with
 * done() taken at once (stream.on + await done()), the form whose rejection a try/catch catches.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof falClientFor>;
beforeAll(async () => {
  // One sandbox job at a time: a job can be kept IN_QUEUE behind another (the cancel test).
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  fal = falClientFor(s.url, s.defaultKey!);
});
afterAll(() => s.cleanup());

type FalBody = {
  detail: string;
  error_type: string;
  message: string;
  error: { code: string; param?: string };
};

async function refusal(model: string, input: Record<string, unknown>): Promise<ApiError<FalBody>> {
  try {
    const stream = await fal.stream(model, { input });
    await stream.done();
  } catch (e) {
    if (e instanceof ApiError) return e as ApiError<FalBody>;
    throw e;
  }
  throw new Error("the stream was not refused");
}

const balance = async () =>
  ((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro;

describe("fal.stream refusals", () => {
  test("an image_size with no clear meaning: 400 naming the accepted forms; nothing held", async () => {
    const before = await balance();
    const e = await refusal("sandbox/image", { prompt: "p", image_size: "huge" });
    expect(e.status).toBe(400);
    expect(e.body.error.code).toBe("validation_error");
    expect(e.body.error_type).toBe("validation_error");
    expect(e.body.error.param).toBe("input.image_size");
    expect(e.body.detail).toContain("square_hd");
    expect(e.message).toBe(e.body.detail);
    expect(await balance()).toBe(before);
  });

  test("an output format the sandbox cannot produce: 400 naming png", async () => {
    const e = await refusal("sandbox/image", { prompt: "p", output_format: "webp" });
    expect(e.status).toBe(400);
    expect(e.body.detail).toContain("must be one of png");
  });

  test("an unknown model: 400 unknown_model", async () => {
    const e = await refusal("acme/nothing", { prompt: "p" });
    expect(e.status).toBe(400);
    expect(e.body.error.code).toBe("unknown_model");
  });

  test("a text model: 400 naming chat completions", async () => {
    const e = await refusal("sandbox/chat", { prompt: "p" });
    expect(e.status).toBe(400);
    expect(e.body.error.code).toBe("use_chat_completions");
    expect(e.body.detail).toContain("chat/completions");
  });

  test("a model id of three segments reaches the same door", async () => {
    const e = await refusal("acme/video/pro", { prompt: "p" });
    expect(e.body.error.code).toBe("unknown_model");
    expect(e.body.detail).toContain("acme/video/pro");
  });

  test("a body that is not a JSON object: 400 in fal's shape", async () => {
    const res = await s.fetch("/v1/run/sandbox/image/stream", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: "[1, 2]",
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as FalBody;
    expect(body.error.code).toBe("validation_error");
    expect(typeof body.detail).toBe("string");
  });

  test("Idempotency-Key: the same key and body stream the same job, held once", async () => {
    const before = BigInt(await balance());
    const send = () =>
      s.fetch("/v1/run/sandbox/speech/stream", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "stream-once" },
        body: JSON.stringify({ text: "once", duration: 2 }),
      });
    const first = await send();
    await first.text();
    const again = await send();
    const events = await again.text();
    expect(again.headers.get("x-fal-request-id")).toBe(first.headers.get("x-fal-request-id"));
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(events).toContain("event: output");
    const price = BigInt(
      (
        (await (
          await s.post("/v1/estimate", { model_id: "sandbox/speech", input: { text: "once", duration: 2 } })
        ).json()) as {
          price_usd_micro: string;
        }
      ).price_usd_micro,
    );
    expect(before - BigInt(await balance())).toBe(price);
  });

  test("a job cancelled while the client streams it: an error event (cancelled), the client raises, caught", async () => {
    const blocker = await s.post("/v1/queue/sandbox/image", { prompt: "first", sandbox: { delay_ms: 1500 } });
    expect(blocker.status).toBe(202);
    const events: { status?: string; error_type?: string }[] = [];
    let caught: unknown;
    let cancelled: Promise<unknown> | null = null;
    try {
      const stream = await fal.stream("sandbox/image", { input: { prompt: "waits" } });
      stream.on("data", (ev) => {
        events.push(ev as { status?: string });
        if ((ev as { status?: string }).status === "IN_QUEUE" && !cancelled) {
          cancelled = fal.queue.cancel("sandbox/image", { requestId: stream.requestId! });
        }
      });
      await stream.done();
    } catch (e) {
      caught = e;
    }
    await cancelled;
    expect(caught).toBeInstanceOf(ApiError);
    expect(events.at(-1)).toEqual(expect.objectContaining({ status: "CANCELLED", error_type: "cancelled" }));
  });
});
