/**
 * Refusals through the `replicate` JS client (1.4.0): each is its ApiError (index.js request: any
 * non-2xx) with Replicate's problem detail and gengate's code inside, and none is retried in a loop
 * (lib/util.js withAutomaticRetries: a POST only on 429, a GET on 429 and 5xx).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Replicate from "replicate";
import { pollUntil, startFunded } from "../helpers/api.ts";

type Problem = { title: string; detail: string; status: number; code: string };
type Prediction = { id: string; status: string; error: string | null; output: unknown };

let s: Awaited<ReturnType<typeof startFunded>>;
let replicate: Replicate;
const sent: string[] = [];
const clientFor = (auth: string) =>
  new Replicate({
    auth,
    baseUrl: `${s.url}/v1`,
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      sent.push(
        `${init?.method ?? "GET"} ${new URL(input instanceof Request ? input.url : String(input)).pathname}`,
      );
      return fetch(input, init);
    }) as typeof fetch,
  });
beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  replicate = clientFor(s.defaultKey!);
});
afterAll(() => s.cleanup());

/** The refusal a call raises: its status and problem body. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: Problem; type: string }> {
  let error: unknown;
  try {
    await call;
  } catch (e) {
    error = e;
  }
  const response = (error as { response?: Response }).response;
  if (!response) throw new Error(`expected an ApiError, got ${String(error)}`);
  const text = /failed with status \d+ [^:]*: (.*)\.$/s.exec((error as Error).message)![1]!;
  return {
    status: response.status,
    body: JSON.parse(text) as Problem,
    type: response.headers.get("content-type")!,
  };
}
const count = (line: string) => sent.filter((l) => l === line).length;

describe("replicate door errors", () => {
  test("an unknown model is 400 unknown_model, in Replicate's problem shape", async () => {
    const r = await refusal(
      replicate.predictions.create({ model: "nobody/nothing", input: { prompt: "x" } }),
    );
    expect(r.status).toBe(400);
    expect(r.type).toBe("application/problem+json");
    expect(r.body).toMatchObject({ code: "unknown_model", status: 400, title: "Invalid input" });
  });

  test("a text model is 400 use_chat_completions naming /v1/chat/completions", async () => {
    const r = await refusal(replicate.run("sandbox/chat", { input: { prompt: "hi" } }));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("use_chat_completions");
    expect(r.body.detail).toContain("/v1/chat/completions");
  });

  test("input the model's schema refuses is 400 validation_error; no job is opened", async () => {
    const before = ((await (await s.get("/v1/requests")).json()) as { data: unknown[] }).data.length;
    const r = await refusal(
      replicate.predictions.create({ model: "sandbox/image", input: { prompt: "x", width: "wide" } }),
    );
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("validation_error");
    const missing = await refusal(
      replicate.request("/models/sandbox/image/predictions", { method: "POST", data: { webhook: null } }),
    );
    expect(missing.status).toBe(400);
    expect(((await (await s.get("/v1/requests")).json()) as { data: unknown[] }).data.length).toBe(before);
  });

  test("a version no model has, or another model's version, is 400 naming version", async () => {
    const unknown = await refusal(
      replicate.predictions.create({ version: "f".repeat(64), input: { prompt: "x" } }),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: "validation_error", param: "version" });
    const wrong = await refusal(
      replicate.predictions.create({ version: `sandbox/image:${"0".repeat(64)}`, input: { prompt: "x" } }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain("not a version of sandbox/image");
    const none = await refusal(replicate.request("/predictions", { method: "POST", data: { input: {} } }));
    expect(none.body).toMatchObject({ code: "validation_error", param: "version" });
  });

  test("a bad webhook_events_filter and a bad Prefer are 400", async () => {
    const filter = await refusal(
      replicate.predictions.create({
        model: "sandbox/image",
        input: { prompt: "x" },
        webhook: "https://example.com/hook",
        webhook_events_filter: ["finished" as "completed"],
      }),
    );
    expect(filter.status).toBe(400);
    const prefer = await refusal(
      replicate.request("/models/sandbox/image/predictions", {
        method: "POST",
        headers: { Prefer: "wait=soon" },
        data: { input: { prompt: "x" } },
      }),
    );
    expect(prefer.body).toMatchObject({ status: 400, code: "validation_error", param: "Prefer" });
  });

  test("a webhook URL the policy refuses is 400 bad_webhook_url", async () => {
    const r = await refusal(
      replicate.predictions.create({
        model: "sandbox/image",
        input: { prompt: "x" },
        webhook: "http://127.0.0.1:9/hook",
      }),
    );
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("bad_webhook_url");
  });

  test("a failed job: run throws Prediction failed, nothing charged", async () => {
    const before = (await (await s.get("/v1/account")).json()) as {
      balance_micro: string;
      held_micro: string;
    };
    let error: unknown;
    try {
      await replicate.run("sandbox/image", { input: { prompt: "boom", sandbox: { fail: true } } });
    } catch (e) {
      error = e;
    }
    expect(String(error)).toContain("Prediction failed: ");
    const after = (await (await s.get("/v1/account")).json()) as {
      balance_micro: string;
      held_micro: string;
    };
    expect(after).toEqual(before);
  });

  test("402 names the billing page and is not retried", async () => {
    const res = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "poor", credit: "0.001" }),
    });
    const poor = clientFor(((await res.json()) as { key: string }).key);
    const before = count("POST /v1/models/sandbox/video/predictions");
    const r = await refusal(poor.run("sandbox/video", { input: { prompt: "long", duration: 10 } }));
    expect(r.status).toBe(402);
    expect(r.body.code).toBe("insufficient_balance");
    expect(r.body.detail).toContain("/console/billing");
    expect(count("POST /v1/models/sandbox/video/predictions")).toBe(before + 1);
  });

  test("the key's in-flight cap (429, the client retries it 5 times at once) and monthly limit (402) apply", async () => {
    const newKey = async (fields: Record<string, unknown>) =>
      ((await (await s.post("/v1/keys", { name: "capped", ...fields })).json()) as { key: string }).key;
    const capped = clientFor(await newKey({ max_in_flight: 1 }));
    const slow = (await capped.predictions.create({
      model: "sandbox/speech",
      input: { text: "slow", duration: 1, sandbox: { delay_ms: 800 } },
    })) as Prediction;
    const before = count("POST /v1/models/sandbox/speech/predictions");
    const r = await refusal(
      capped.predictions.create({ model: "sandbox/speech", input: { text: "second", duration: 1 } }),
    );
    expect(r.status).toBe(429);
    expect(r.body.code).toBe("too_many_in_flight");
    expect(count("POST /v1/models/sandbox/speech/predictions")).toBe(before + 6);
    await capped.wait(slow as never, { interval: 50 });
    const limited = clientFor(await newKey({ monthly_limit_micro: "5000" }));
    const l = await refusal(limited.predictions.create({ model: "sandbox/image", input: { prompt: "x" } }));
    expect(l.status).toBe(402);
    expect(l.body.code).toBe("key_limit_reached");
  });

  test("cancel of a processing prediction is 409 not_cancellable, not retried; the job runs to the end", async () => {
    const running = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "runs", sandbox: { delay_ms: 800 } },
    })) as Prediction;
    await pollUntil(
      async () => (await replicate.predictions.get(running.id)) as Prediction,
      (p) => p.status === "processing",
    );
    const r = await refusal(replicate.predictions.cancel(running.id));
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("not_cancellable");
    expect(count(`POST /v1/predictions/${running.id}/cancel`)).toBe(1);
    const done = (await replicate.wait(running as never, { interval: 50 })) as Prediction;
    expect(done.status).toBe("succeeded");
    // Cancelling an ended prediction answers it as it is.
    expect(((await replicate.predictions.cancel(running.id)) as Prediction).status).toBe("succeeded");
  });

  test("a Blob input that is not an image: the client's upload to /v1/files is refused with a 4xx, no job opened", async () => {
    const before = count("POST /v1/models/sandbox/upscale/predictions");
    const r = await refusal(
      replicate.run("sandbox/upscale", {
        input: {
          // Declared a PNG, but its bytes are text: the upload's magic-byte check refuses it.
          image_url: new Blob([new TextEncoder().encode("not an image at all")], { type: "image/png" }),
          scale: 2,
        },
      }),
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(count("POST /v1/files")).toBe(1);
    expect(count("POST /v1/models/sandbox/upscale/predictions")).toBe(before);
  });

  test("a malformed id is 400, an unknown one 404", async () => {
    expect((await refusal(replicate.predictions.get("not-a-uuid"))).status).toBe(400);
    const unknown = await refusal(replicate.predictions.get("019ac000-0000-7000-8000-000000000000"));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
  });
});
