import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { streamText } from "ai";
import OpenAI, { APIError, BadRequestError } from "openai";
import type { startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";
import { startWithMock } from "./helpers.ts";

/**
 * POST /v1/responses refusing what a text model cannot take, and failing upstreams, as the openai
 * JS SDK (7.57) sees them: the native error shape is OpenAI's, so the SDK raises its own typed
 * errors (node_modules/openai/src/core/error.ts reads error.code, error.param), and a stream that
 * fails mid-way throws on the `error` event (src/core/streaming.ts). Nothing refused or failed is
 * charged.
 */
const mock = startMockOpenAI();
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;
beforeAll(async () => {
  s = await startWithMock(mock, ["ok", "midstream-error", "429"]);
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
afterAll(() => {
  s?.cleanup();
  mock.stop();
});

const account = async () =>
  (await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string };

/** The error the SDK raises for a body (cast: the SDK's types would refuse some of these). */
async function refusal(body: Record<string, unknown>): Promise<APIError> {
  try {
    await client.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  } catch (e) {
    expect(e).toBeInstanceOf(APIError);
    return e as APIError;
  }
  throw new Error("the call was not refused");
}

describe("refused input: 400 in OpenAI's shape, naming what is accepted; nothing opened", () => {
  test.each([
    [
      "an image part",
      { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] },
      "bad_messages",
      "input[0].content[0]",
      "input_text",
    ],
    [
      "a file part",
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] },
      "bad_messages",
      "input[0].content[0]",
      "input_text",
    ],
    [
      "a tool output item",
      { input: [{ type: "function_call_output", call_id: "c1", output: "42" }] },
      "bad_messages",
      "input[0].type",
      "only message items",
    ],
    [
      "tools",
      { input: "hi", tools: [{ type: "function", name: "f", parameters: {} }] },
      "validation_error",
      "tools",
      "text only",
    ],
    [
      "previous_response_id",
      { input: "hi", previous_response_id: "resp_1" },
      "validation_error",
      "previous_response_id",
      "does not store conversations",
    ],
    [
      "conversation",
      { input: "hi", conversation: "conv_1" },
      "validation_error",
      "conversation",
      "does not store conversations",
    ],
    ["background", { input: "hi", background: true }, "validation_error", "background", "not supported"],
    ["no input", {}, "bad_messages", "input", "input must be"],
    ["an empty input", { input: [] }, "bad_messages", "input", "must not be empty"],
    [
      "a bad role",
      { input: [{ role: "tool", content: "x" }] },
      "bad_messages",
      "input[0].role",
      "user, assistant",
    ],
    [
      "max_output_tokens 0",
      { input: "hi", max_output_tokens: 0 },
      "validation_error",
      "max_output_tokens",
      "at least 1",
    ],
    [
      "max_output_tokens above the context",
      { input: "hi", max_output_tokens: 40_000 },
      "validation_error",
      "max_output_tokens",
      "lower max_output_tokens",
    ],
    ["temperature 5", { input: "hi", temperature: 5 }, "validation_error", "temperature", "[0, 2]"],
    [
      "an unknown text.format",
      { input: "hi", text: { format: { type: "xml" } } },
      "validation_error",
      "text.format.type",
      "json_schema",
    ],
  ])("%s", async (_name, body, code, param, words) => {
    const before = await account();
    const e = await refusal({ model: "sandbox/chat", ...body });
    expect(e).toBeInstanceOf(BadRequestError);
    expect(e.code).toBe(code);
    expect(e.param).toBe(param);
    expect(e.message).toContain(words);
    expect(await account()).toEqual(before);
  });

  test("a media model is 400 naming the door that runs it", async () => {
    const e = await refusal({ model: "sandbox/image", input: "a fox" });
    expect(e.status).toBe(400);
    expect(e.code).toBe("validation_error");
    expect(e.message).toContain("POST /v1/queue/sandbox/image");
  });

  test("an unknown model is 400 unknown_model", async () => {
    const e = await refusal({ model: "acme/missing", input: "hi" });
    expect([e.status, e.code]).toEqual([400, "unknown_model"]);
  });

  test("an account without the money: 402 insufficient_balance naming the billing page", async () => {
    const created = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `poor-${Date.now()}` }),
    });
    const { key } = (await created.json()) as { key: string };
    const poor = new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0 });
    const e = await poor.responses.create({ model: "sandbox/chat", input: "hi" }).then(
      () => null,
      (err: unknown) => err as APIError,
    );
    expect([e?.status, e?.code]).toEqual([402, "insufficient_balance"]);
    expect(e?.message).toContain("/console/billing");
  });

  test("a body that is not JSON is 400, never a 500", async () => {
    const res = await s.post("/v1/responses", "{not json");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBeString();
  });
});

describe("failing upstreams: nothing charged, nothing held", () => {
  test("the upstream refuses (429): 503 capacity_unavailable with Retry-After; the job FAILED", async () => {
    const before = await account();
    const e = await refusal({ model: "mock/429", input: "hi" });
    expect([e.status, e.code]).toEqual([503, "capacity_unavailable"]);
    expect(e.headers?.get("retry-after")).toBeString();
    expect(await account()).toEqual(before);
  });

  test("a failure before the first token of a stream is an error answer, not a stream", async () => {
    const before = await account();
    const res = await s.post("/v1/responses", {
      model: "sandbox/chat",
      input: "hi",
      stream: true,
      sandbox: { fail: true },
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("submit_failed");
    expect(await account()).toEqual(before);
  });

  test("mid-stream: response.failed then an error event the SDK throws; the job FAILED, nothing charged", async () => {
    const before = await account();
    const stream = await client.responses.create({
      model: "mock/midstream-error",
      input: "hi",
      stream: true,
    });
    const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
    let thrown: unknown = null;
    try {
      for await (const ev of stream) seen.push(ev);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(APIError);
    expect((thrown as APIError).message).toContain("Nothing was charged");
    const failed = seen.find((e) => e.type === "response.failed") as OpenAI.Responses.ResponseFailedEvent;
    expect(failed.response.status).toBe("failed");
    expect(failed.response.error?.code as string).toBe("submit_failed"); // gengate's code
    expect(seen.some((e) => e.type === "response.output_text.delta")).toBe(true);
    expect(seen.some((e) => e.type === "response.completed")).toBe(false);
    const requestId = failed.response.id.slice("resp_".length);
    const rec = (await (await s.get(`/v1/requests/${requestId}`)).json()) as { status: string };
    expect(rec.status).toBe("FAILED");
    expect(await account()).toEqual(before);
  });
});

describe("a mid-stream failure as the other clients see it", () => {
  test("AI SDK streamText: the error reaches onError, finishReason error; nothing charged", async () => {
    const before = await account();
    const openai = createOpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey! });
    const errors: unknown[] = [];
    const r = streamText({
      model: openai("mock/midstream-error"),
      prompt: "hi",
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    let text = "";
    for await (const d of r.textStream) text += d;
    expect(text.length).toBeGreaterThan(0); // what came before the failure
    expect(await r.finishReason).toBe("error");
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toContain("Nothing was charged");
    expect(await account()).toEqual(before);
  });

  test("LangChain ChatOpenAI (useResponsesApi) stream: throws; nothing charged", async () => {
    const before = await account();
    const llm = new ChatOpenAI({
      model: "mock/midstream-error",
      apiKey: s.defaultKey!,
      configuration: { baseURL: `${s.url}/v1` },
      useResponsesApi: true,
      maxRetries: 0,
    });
    let thrown: unknown = null;
    try {
      for await (const _ of await llm.stream("hi"));
    } catch (e) {
      thrown = e;
    }
    expect(String(thrown)).toContain("Nothing was charged");
    expect(await account()).toEqual(before);
  });
});

describe("through an OpenAI-compatible upstream", () => {
  test("the upstream gets the chat call: instructions first, the limit, sampling; no Responses-only fields", async () => {
    const r = await client.responses.create({
      model: "mock/ok",
      instructions: "Be brief.",
      input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
      max_output_tokens: 6,
      temperature: 0.5,
      store: true,
      metadata: { a: "b" },
      user: "u-1",
      text: { format: { type: "json_object" } },
    });
    expect(r.output_text).toBe("Hello from the mock upstream.");
    const sent = mock.requests.at(-1)!.body;
    expect(sent.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ]);
    expect(sent.max_tokens).toBe(6);
    expect(sent.temperature).toBe(0.5);
    expect(sent.user).toBe("u-1");
    expect(sent.response_format).toEqual({ type: "json_object" });
    for (const k of ["input", "instructions", "store", "metadata", "text", "max_output_tokens"])
      expect(sent).not.toHaveProperty(k);
  });
});
