import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError, toFile } from "openai";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { type MockOpenAI, startMockOpenAI } from "../helpers/mock-openai.ts";

/**
 * Refusals of OpenAI's images and speech doors: each is the contract's error in OpenAI's shape (so
 * openai-node raises its typed APIError with `code` and `param`), with the right status, and
 * nothing is charged. A job that fails upstream is 502 generation_failed, free, and says
 * `x-should-retry: false` (openai-node src/client.ts shouldRetry obeys it; a retry would be a new job).
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let mock: MockOpenAI;
let client: OpenAI;

beforeAll(async () => {
  mock = startMockOpenAI();
  mock.echo = "UPSTREAM-SECRET-MARKER";
  s = await startFunded(
    `[limits]\nupload_max_bytes = 200000\nrun_wait_seconds = 1\n[queue]\nconcurrency = { sandbox = 1 }\n` +
      `[[models]]\nid = "acme/quick"\nkind = "image"\nprovider = "sandbox"\nprice_usd_micro = 1000\nmax = 1\ntime_limit_seconds = 1\n` +
      `[providers.mock]\ntype = "openai"\nbase_url = "${mock.url}/v1"\n` +
      `[[models]]\nid = "mock/refused"\nkind = "image"\nprovider = "mock"\nupstream_model = "400"\nprice_usd_micro = 1000\nmax = 1\n` +
      `[[models]]\nid = "mock/echo"\nkind = "image"\nprovider = "mock"\nupstream_model = "echo-500"\nprice_usd_micro = 1000\nmax = 1\n` +
      `[[models]]\nid = "mock/plain"\nkind = "image"\nprovider = "mock"\nupstream_model = "ok"\nprice_usd_micro = 1000\nmax = 1\n` +
      `input_schema = { type = "object", required = ["prompt"], properties = { prompt = { type = "string" } } }\n`,
  );
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
afterAll(() => {
  s?.cleanup();
  mock?.stop();
});

const balance = async () =>
  ((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro;

/** The APIError a call raises (it must raise one). */
async function refused(call: () => Promise<unknown>): Promise<APIError> {
  const err = await call().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  return err as APIError;
}

describe("images: bad input is 400 in OpenAI's shape, nothing charged", () => {
  test.each([
    [{ size: "9000x9000" }, "validation_error", "size", "64x64 to 8192x8192"],
    [{ size: "large" }, "validation_error", "size", "WIDTHxHEIGHT"],
    [{ output_format: "jpeg" }, "validation_error", "output_format", "produces png"],
    [{ response_format: "svg" }, "validation_error", "response_format", "b64_json"],
    [{ n: 0 }, "validation_error", "n", "n must be"],
    [{ n: 5 }, "validation_error", "input.num_images", "num_images"],
    [{ stream: true }, "validation_error", "stream", "not served"],
    [{ temperature: 1 }, "validation_error", "temperature", "Unknown parameter"],
    [{ model: "sandbox/chat" }, "use_chat_completions", "model", "/v1/chat/completions"],
    [{ model: "sandbox/video" }, "validation_error", "model", "POST /v1/videos"],
    [{ model: "sandbox/speech" }, "validation_error", "model", "POST /v1/audio/speech"],
    [{ model: "acme/missing" }, "unknown_model", "model", "not in the catalog"],
    [{ model: "mock/plain", size: "512x512" }, "validation_error", "size", "takes no size"],
    [{ model: "mock/plain", n: 2 }, "validation_error", "n", "one image per call"],
  ])("%j -> %s", async (extra, code, param, message) => {
    const before = await balance();
    const err = await refused(() =>
      client.images.generate({ model: "sandbox/image", prompt: "x", ...extra } as never),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe(code);
    expect(err.param).toBe(param);
    expect(err.message).toContain(message);
    expect(await balance()).toBe(before);
  });

  test("the model's own schema still judges the mapped input (a prompt too long)", async () => {
    const err = await refused(() =>
      client.images.generate({ model: "sandbox/image", prompt: "x".repeat(8001) }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe("validation_error");
  });
});

describe("speech: bad input is 400 naming what the model accepts", () => {
  test.each([
    [{ response_format: "mp3" }, "response_format", "produces wav"],
    [{ speed: 1.5 }, "speed", "no speed control"],
    [{ stream_format: "sse" }, "stream_format", "audio"],
    [{ input: "" }, "input", "input is required"],
    [{ model: "sandbox/image" }, "model", "POST /v1/images/generations"],
  ])("%j", async (extra, param, message) => {
    const err = await refused(() =>
      client.audio.speech.create({ model: "sandbox/speech", input: "hi", voice: "alloy", ...extra } as never),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe(param);
    expect(err.message).toContain(message);
  });

  test("speed 1 and instructions are accepted by a model without them", async () => {
    const res = await client.audio.speech.create({
      model: "sandbox/speech",
      input: "hi",
      voice: "alloy",
      speed: 1,
      instructions: "cheerful",
    });
    expect(res.headers.get("content-type")).toBe("audio/wav");
  });
});

describe("edits", () => {
  const png = () => toFile(Buffer.from(encodePng(32, 32, 1)), "a.png", { type: "image/png" });

  test("a model without an image input is 400 naming the generations route; nothing stored or charged", async () => {
    const before = await balance();
    const err = await refused(async () =>
      client.images.edit({ model: "mock/plain", prompt: "x", image: await png() }),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe("image");
    expect(err.message).toContain("/v1/images/generations");
    expect(await balance()).toBe(before);
  });

  test("several images for a model taking one: 400", async () => {
    const err = await refused(async () =>
      client.images.edit({ model: "sandbox/image", prompt: "x", image: [await png(), await png()] }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain("one source image");
  });

  test("no image: 400; a JSON body: 415", async () => {
    const form = new FormData();
    form.set("model", "sandbox/image");
    form.set("prompt", "x");
    const none = await s.fetch("/v1/images/edits", { method: "POST", body: form });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: { param: string } }).error.param).toBe("image");
    const json = await s.post("/v1/images/edits", { model: "sandbox/image", prompt: "x" });
    expect(json.status).toBe(415);
  });

  test("a form past the upload cap is 413, declared or streamed", async () => {
    const form = new FormData();
    form.set("model", "sandbox/image");
    form.set("prompt", "x");
    form.set("image", new Blob([new Uint8Array(300_000)], { type: "image/png" }), "big.png");
    const declared = await s.fetch("/v1/images/edits", { method: "POST", body: form });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const body = await new Response(form).blob();
    const chunks = new ReadableStream<Uint8Array>({
      async start(c) {
        const bytes = new Uint8Array(await body.arrayBuffer());
        for (let i = 0; i < bytes.length; i += 65536) c.enqueue(bytes.subarray(i, i + 65536));
        c.close();
      },
    });
    const streamed = await s.fetch("/v1/images/edits", {
      method: "POST",
      body: chunks,
      headers: { "content-type": body.type },
    });
    expect(streamed.status).toBe(413);
  });
});

describe("a job that fails", () => {
  test("502 generation_failed, x-should-retry false, the upstream's words not echoed, nothing charged", async () => {
    for (const model of ["mock/refused", "mock/echo"]) {
      const before = await balance();
      const res = await s.post("/v1/images/generations", { model, prompt: "x" });
      expect(res.status).toBe(502);
      expect(res.headers.get("x-should-retry")).toBe("false");
      const text = await res.text();
      expect(text).not.toContain(mock.echo);
      expect(text).not.toContain("safety system");
      const body = JSON.parse(text) as { error: { code: string; request_id: string } };
      expect(body.error.code).toBe("generation_failed");
      expect(await balance()).toBe(before);
      const job = (await (await s.get(`/v1/requests/${body.error.request_id}`)).json()) as { status: string };
      expect(job.status).toBe("FAILED");
    }
  });
});

describe("sandbox controls through the door (an SDK's extra body field)", () => {
  test("fail: 502 generation_failed, not retried by openai-node even with retries on, free", async () => {
    const retrying = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 2 });
    const count = async () =>
      ((await (await s.get("/v1/requests?model_id=sandbox/speech")).json()) as { data: unknown[] }).data
        .length;
    const [before, jobs] = [await balance(), await count()];
    const err = await refused(() =>
      retrying.audio.speech.create({
        model: "sandbox/speech",
        input: "x",
        voice: "alloy",
        sandbox: { fail: true },
      } as never),
    );
    expect(err.status).toBe(502);
    expect(err.code).toBe("generation_failed");
    expect(err.headers?.get("x-should-retry")).toBe("false");
    expect(await count()).toBe(jobs + 1);
    expect(await balance()).toBe(before);
  });

  test("a job outliving the wait (1 s here: queued behind a slow one): 409 request_not_ready naming it", async () => {
    const slow = await s.post("/v1/queue/sandbox/image", { prompt: "slow", sandbox: { delay_ms: 2000 } });
    expect(slow.status).toBe(202);
    const res = await s.post("/v1/images/generations", { model: "acme/quick", prompt: "queued" });
    expect(res.status).toBe(409);
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as { error: { code: string; request_id: string; message: string } };
    expect(body.error.code).toBe("request_not_ready");
    expect(body.error.message).toContain(`/v1/requests/${body.error.request_id}`);
  });

  test("a client that drops the call and sends it again with its Idempotency-Key gets the same job: charged once", async () => {
    // The earlier tests' jobs are over first, so the balance moves by this test's jobs alone.
    const open = async () =>
      (
        await Promise.all(
          ["IN_QUEUE", "IN_PROGRESS"].map(
            async (st) =>
              ((await (await s.get(`/v1/requests?status=${st}`)).json()) as { data: unknown[] }).data,
          ),
        )
      ).flat().length;
    await pollUntil(open, (n) => n === 0);
    const headers = { "idempotency-key": `drop-${crypto.randomUUID()}` };
    const call = { model: "sandbox/image", prompt: "dropped", size: "64x64", response_format: "b64_json" };
    const slow = await s.post("/v1/queue/sandbox/image", { prompt: "slow", sandbox: { delay_ms: 1500 } });
    expect(slow.status).toBe(202);
    const before = BigInt(await balance());
    const gone = new AbortController();
    const dropped = s
      .post("/v1/images/generations", call, { headers, signal: gone.signal })
      .catch(() => null);
    await Bun.sleep(300); // the job is queued behind the slow one
    gone.abort();
    expect(await dropped).toBeNull();
    let again = await s.post("/v1/images/generations", call, { headers });
    // The dropped call's claim is settled a moment after the disconnect: 409 while it still runs.
    for (let i = 0; i < 20 && again.status === 409; i++) {
      await Bun.sleep(50);
      again = await s.post("/v1/images/generations", call, { headers });
    }
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const jobs = (await (await s.get("/v1/requests?model_id=sandbox/image")).json()) as {
      data: { request_id: string; input?: unknown }[];
    };
    expect(jobs.data[0]!.request_id).toBe(again.headers.get("x-gengate-request-id")!);
    // Charged: the slow job (10 000) and the dropped call's one job (10 000), nothing more.
    expect(before - BigInt(await balance())).toBe(20_000n);
  });

  test("a model that is not a sandbox one refuses them", async () => {
    const err = await refused(() =>
      client.images.generate({ model: "mock/refused", prompt: "x", sandbox: { fail: true } } as never),
    );
    expect(err.status).toBe(400);
    expect(err.message).toContain("sandbox");
  });
});

describe("402", () => {
  test("an empty account: 402 insufficient_balance naming the billing page", async () => {
    const made = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "broke" }),
    });
    const key = ((await made.json()) as { key: string }).key;
    const broke = new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0 });
    for (const call of [
      () => broke.images.generate({ model: "sandbox/image", prompt: "x" }),
      () => broke.audio.speech.create({ model: "sandbox/speech", input: "x", voice: "alloy" }),
    ]) {
      const err = await refused(call);
      expect(err.status).toBe(402);
      expect(err.code).toBe("insufficient_balance");
      expect(err.message).toContain("/console/billing");
      expect((err.error as { billing_url?: string }).billing_url).toContain("/console/billing");
    }
  });
});
