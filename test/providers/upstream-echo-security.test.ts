import { afterAll, describe, expect, test } from "bun:test";
import { finalJob, logLines, makeTestApp, submitQueued, testWorkerPool } from "../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";
import { SDXL, SDXL_SCHEMA } from "./comfyui/helpers.ts";
import { startMockComfy } from "./comfyui/mock-comfy.ts";
import { startMockFal } from "./fal/mock-fal.ts";
import { startMockReplicate, TOKEN } from "./replicate/mock-replicate.ts";

/**
 * No upstream's status or body reaches a client beyond our fixed message. Each stand-in upstream
 * answers an error holding a unique marker, with an unusual status (418, 422, 507), driven end to
 * end: submitted through the API, run by the real worker pool on the configured provider, read back
 * through everything a client can read (the job's record, status with logs, response, the
 * /v1/requests list, the webhook body, the chat door's error). The marker and the status must be in
 * none of them, and in the server's log ("upstream error", with the request id) for the operator.
 * The error shapes are the upstreams' own: OpenAI's {error: {message, type, code}} (openai-node
 * src/error.ts reads `error.message`), fal's {detail} with X-Fal-Error-Type (docs.fal.ai "Request
 * Error Types"), Replicate's problem details {title, detail, status} and a prediction's `error`
 * (replicate.com/docs/reference/http), ComfyUI's /prompt 400 {error, node_errors} and its history's
 * execution_error (comfyanonymous/ComfyUI server.py `post_prompt`, execution.py).
 */

const openai = startMockOpenAI();
const fal = startMockFal();
const replicate = startMockReplicate();
const comfy = startMockComfy();
comfy.slowMs = 0;
process.env.ECHO_TEST_FAL_KEY = fal.key;
process.env.ECHO_TEST_REPLICATE_TOKEN = TOKEN;

const media = (id: string, provider: string, upstream: string, kind = "image", extra = {}) => ({
  id,
  kind,
  provider,
  upstream_model: upstream,
  price_usd_micro: 1000,
  max: 4,
  ...extra,
});
const t = await makeTestApp({
  providers: {
    oa: { type: "openai", base_url: openai.url },
    fal: { type: "fal", base_url: fal.url, api_key_env: "ECHO_TEST_FAL_KEY", poll_interval_ms: 20 },
    rep: {
      type: "replicate",
      base_url: replicate.url,
      api_key_env: "ECHO_TEST_REPLICATE_TOKEN",
      poll_interval_ms: 20,
    },
    comfy: { type: "comfyui", base_url: comfy.url, poll_interval_ms: 20, workflows: { sdxl: SDXL } },
  },
  models: [
    media("oa/img-teapot", "oa", "echo-418"),
    media("oa/speech-storage", "oa", "echo-507", "audio", { max: 30 }),
    media("fal/submit-refused", "fal", "test/echo-submit"),
    media("fal/stored", "fal", "test/echo-stored"),
    media("fal/odd-type", "fal", "test/echo-odd-type"),
    media("fal/cancelled", "fal", "test/echo-cancelled"),
    media("rep/create-refused", "rep", "fault/create_418"),
    media("rep/failed", "rep", "fault/failed"),
    media("comfy/img", "comfy", "sdxl", "image", { input_schema: SDXL_SCHEMA }),
    mockTextModel("echo-418", { id: "oa/chat-teapot", provider: "oa" }),
    mockTextModel("echo-507", { id: "oa/chat-storage", provider: "oa" }),
  ],
});
await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
const pool = testWorkerPool(t.ctx);
afterAll(async () => {
  await pool.stop(1000);
  for (const m of [openai, fal, replicate, comfy]) m.stop();
});

const newMarker = () => `MARKER-${crypto.randomUUID()}`;
/** The status as a number of its own (not a digit run inside an id, a timestamp or a price). */
const statusIn = (text: string, status: number) => new RegExp(`(^|[^\\w.])${status}([^\\w.]|$)`).test(text);

/** Everything the client can read about a request, as text. */
async function clientView(id: string): Promise<string> {
  const get = async (path: string) => await (await t.request(path)).text();
  const job = (await t.ctx.jobs.get(id))!;
  return [
    await get(`/v1/requests/${id}`),
    await get(`/v1/requests/${id}/status?logs=1`),
    await get(`/v1/requests/${id}/response`),
    await get("/v1/requests?limit=100"),
    // The webhook's body is this record, rendered at send time (src/app/background.ts).
    JSON.stringify(await t.ctx.views.record(job), (_k, v) => (typeof v === "bigint" ? String(v) : v)),
    job.error_message ?? "",
  ].join("\n");
}

/** The operator's log line for the request: the upstream's status and words. */
function operatorLine(id: string): Record<string, unknown> | undefined {
  return logLines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === "upstream error" && l.request_id === id);
}

async function expectHidden(id: string, marker: string, status: number | null) {
  const seen = await clientView(id);
  expect(seen).not.toContain(marker);
  if (status !== null) expect(statusIn(seen, status)).toBe(false);
  const line = operatorLine(id);
  expect(line).toBeDefined();
  expect(String(line!.detail)).toContain(marker);
  if (status !== null) expect(line!.status).toBe(status);
}

/** Submits, waits for the job to fail, checks nothing was charged; returns its request id. */
async function failedJob(model: string, input: Record<string, unknown> = { prompt: "a cat" }) {
  const id = await submitQueued(t, model, input);
  const job = await finalJob(t.ctx, id);
  expect(job.status).toBe("FAILED");
  expect((await t.ctx.ledger.getHold(job.hold_id))!.status).toBe("released");
  return { id, message: job.error_message ?? "" };
}

describe("media jobs: the upstream's words and status stay in the server's log", () => {
  test("openai images: a 418 with OpenAI's error body", async () => {
    const marker = newMarker();
    openai.echo = marker;
    const { id, message } = await failedJob("oa/img-teapot");
    expect(message).toBe("The upstream refused the call.");
    await expectHidden(id, marker, 418);
  });

  test("openai speech: a 507", async () => {
    const marker = newMarker();
    openai.echo = marker;
    const { id, message } = await failedJob("oa/speech-storage", { text: "hello", duration: 2 });
    expect(message).toBe("The upstream failed the speech request.");
    await expectHidden(id, marker, 507);
  });

  test("fal: a 422 refusing the submit, FastAPI's detail list", async () => {
    const marker = newMarker();
    fal.on("test/echo-submit", {
      submit: [{ status: 422, detail: [{ loc: ["body", "prompt"], msg: marker }] }],
    });
    const { id, message } = await failedJob("fal/submit-refused");
    expect(message).toBe("fal refused the job's input.");
    await expectHidden(id, marker, 422);
  });

  test("fal: a stored 418 error; a code of fal's vocabulary is named, its detail is not", async () => {
    const marker = newMarker();
    fal.on("test/echo-stored", { fail: { status: 418, detail: marker, errorType: "teapot_error" } });
    const { id, message } = await failedJob("fal/stored");
    expect(message).toMatch(/^fal reports request \S+ failed \(teapot_error\)\.$/);
    await expectHidden(id, marker, 418);
  });

  test("fal: an error_type that is not a code of its vocabulary is not named", async () => {
    const marker = newMarker();
    fal.on("test/echo-odd-type", { fail: { status: 418, detail: "x", errorType: marker } });
    const { id, message } = await failedJob("fal/odd-type");
    expect(message).toMatch(/^fal reports request \S+ failed\.$/);
    await expectHidden(id, marker, 418);
  });

  test("fal: a CANCELED status with its error", async () => {
    const marker = newMarker();
    fal.on("test/echo-cancelled", { finalStatus: { status: "CANCELED", error: marker } });
    const { id, message } = await failedJob("fal/cancelled");
    expect(message).toMatch(/^fal cancelled request \S+\.$/);
    await expectHidden(id, marker, null);
  });

  test("replicate: a 418 refusing the create", async () => {
    const marker = newMarker();
    replicate.marker = marker;
    const { id, message } = await failedJob("rep/create-refused");
    expect(message).toBe("Replicate refused the prediction's input.");
    await expectHidden(id, marker, 418);
  });

  test("replicate: a failed prediction's error", async () => {
    const marker = newMarker();
    replicate.marker = marker;
    const { id, message } = await failedJob("rep/failed");
    expect(message).toMatch(/^The Replicate prediction \S+ failed\.$/);
    await expectHidden(id, marker, null);
  });

  const comfyCases = [
    ["a 418 to the prompt", "418", "ComfyUI refused the prompt.", 418],
    ["a workflow refused with node errors (400)", "invalid", "ComfyUI refused the workflow.", 400],
    ["a workflow failed by a node's exception", "exec-error", "ComfyUI failed the workflow.", null],
  ] as const;
  for (const [what, fault, expected, status] of comfyCases) {
    test(`comfyui: ${what}`, async () => {
      const marker = newMarker();
      comfy.marker = marker;
      comfy.fault = fault;
      const { id, message } = await failedJob("comfy/img").finally(() => {
        comfy.fault = null;
      });
      expect(message).toBe(expected);
      await expectHidden(id, marker, status);
    });
  }
});

describe("chat: the door's error holds our message only", () => {
  const chat = (model: string, stream: boolean) =>
    t.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream }),
    });

  for (const [model, status, kind] of [
    ["oa/chat-teapot", 418, "refused"],
    ["oa/chat-storage", 507, "failed"],
  ] as const) {
    for (const stream of [false, true]) {
      test(`a ${status} from the upstream${stream ? " (stream requested)" : ""}: 502 with our message`, async () => {
        const marker = newMarker();
        openai.echo = marker;
        const res = await chat(model, stream);
        const text = await res.text();
        expect(res.status).toBe(502);
        const body = JSON.parse(text) as { error: { message: string; request_id: string } };
        expect(body.error.message).toBe(`The upstream ${kind} the call. Nothing was charged.`);
        expect(text).not.toContain(marker);
        expect(statusIn(text, status)).toBe(false);
        await expectHidden(body.error.request_id, marker, status);
      });
    }
  }
});
