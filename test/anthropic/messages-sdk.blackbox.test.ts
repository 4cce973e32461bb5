import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";

/**
 * The official `@anthropic-ai/sdk` (1.14.0) pointed at gengate, changed in nothing but `baseURL` and
 * `apiKey`: it sends the key as `x-api-key` and `anthropic-version` (src/client.ts), appends
 * /v1/messages, parses the message (src/resources/messages/messages.ts) and the stream's events
 * (src/core/streaming.ts, src/lib/MessageStream.ts). Each call's ledger movement is exactly what
 * POST /v1/estimate prices for its usage, never above what it prices for the reservation.
 */
const mock = startMockOpenAI();
let s: Awaited<ReturnType<typeof startFunded>>;
let client: Anthropic;
beforeAll(async () => {
  process.env.MOCK_UPSTREAM_KEY = "sk-upstream-secret";
  const model = (name: string) =>
    `[[models]]\nid = "mock/${name}"\nkind = "text"\nprovider = "mock"\nupstream_model = "${name}"\ninput_price_usd_micro = 1000000\noutput_price_usd_micro = 2000000\ncontext = 8192\n`;
  s = await startFunded(
    [
      `[providers.mock]\ntype = "openai"\nbase_url = "${mock.url}"\napi_key_env = "MOCK_UPSTREAM_KEY"\n`,
      model("ok"),
      model("midstream-error"),
    ].join("\n"),
  );
  client = new Anthropic({ apiKey: s.defaultKey!, baseURL: s.url, maxRetries: 0 });
});
afterAll(() => {
  s.cleanup();
  mock.stop();
});

const balance = async () => {
  const a = (await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string };
  return { balance: BigInt(a.balance_micro), held: BigInt(a.held_micro) };
};
/** POST /v1/estimate for a text model: the price of these token counts. */
const estimate = async (model: string, input_tokens: number, output_tokens: number) => {
  const res = await s.post("/v1/estimate", { model_id: model, input: { input_tokens, output_tokens } });
  expect(res.status).toBe(200);
  return BigInt(((await res.json()) as { price_usd_micro: string }).price_usd_micro);
};
const requestIdOf = (messageId: string) => {
  expect(messageId).toMatch(/^msg_/);
  return messageId.slice("msg_".length);
};
const listed = async () =>
  (
    (await (await s.get("/v1/requests?limit=100")).json()) as {
      data: { request_id: string; model_id: string }[];
    }
  ).data;
type Rec = { status: string; price: { charged_usd_micro: string; reserved_micro: string } };
const record = async (id: string) => (await (await s.get(`/v1/requests/${id}`)).json()) as Rec;

/** Asserts one call's settlement: the ledger moved by the estimate of its usage, within the hold. */
async function expectSettled(
  before: { balance: bigint },
  model: string,
  usage: { input_tokens: number; output_tokens: number },
  reservedInput: number,
  maxTokens: number,
) {
  const after = await balance();
  const charged = before.balance - after.balance;
  expect(charged).toBe(await estimate(model, usage.input_tokens, usage.output_tokens));
  expect(charged).toBeLessThanOrEqual(await estimate(model, reservedInput, maxTokens));
  expect(charged).toBeGreaterThan(0n);
  expect(after.held).toBe(0n);
}

describe("@anthropic-ai/sdk against gengate", () => {
  const system = "Answer briefly.";
  const messages: Anthropic.MessageParam[] = [
    { role: "user", content: "Hello there" },
    { role: "assistant", content: [{ type: "text", text: "Hi." }] },
    { role: "user", content: [{ type: "text", text: "Say something" }] },
  ];

  test("messages.create: a message, billed exactly, listed in /v1/requests", async () => {
    const { input_tokens } = await client.messages.countTokens({ model: "sandbox/chat", system, messages });
    const before = await balance();
    const msg = await client.messages.create({
      model: "sandbox/chat",
      max_tokens: 6,
      system,
      messages,
      stop_sequences: ["never said"],
      metadata: { user_id: "u-1" },
    });
    expect(msg).toMatchObject({
      type: "message",
      role: "assistant",
      model: "sandbox/chat",
      stop_reason: "max_tokens",
      stop_sequence: null,
    });
    expect(msg.content).toEqual([{ type: "text", text: 'You said: "Say something' } as Anthropic.TextBlock]);
    // The sandbox counts exactly: count_tokens is the input billed, the reply is cut at max_tokens.
    expect(msg.usage).toMatchObject({ input_tokens, output_tokens: 6 });
    await expectSettled(before, "sandbox/chat", msg.usage, input_tokens, 6);
    const id = requestIdOf(msg.id);
    expect((await listed()).find((r) => r.request_id === id)).toMatchObject({ model_id: "sandbox/chat" });
    expect((await record(id)).status).toBe("COMPLETED");
  });

  test("a reply that ends on its own is end_turn", async () => {
    const msg = await client.messages.create({
      model: "sandbox/chat",
      max_tokens: 200,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(msg.stop_reason).toBe("end_turn");
    expect((msg.content[0] as Anthropic.TextBlock).text).toEndWith("one token at a time.");
  });

  test("messages.stream(): text events and finalMessage, billed exactly", async () => {
    const { input_tokens } = await client.messages.countTokens({ model: "sandbox/chat", messages });
    const before = await balance();
    const stream = client.messages.stream({ model: "sandbox/chat", max_tokens: 8, messages });
    let text = "";
    stream.on("text", (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('You said: "Say something".');
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: "text", text });
    expect(final.stop_reason).toBe("max_tokens");
    expect(final.usage).toMatchObject({ input_tokens, output_tokens: 8 });
    await expectSettled(before, "sandbox/chat", final.usage, input_tokens, 8);
    expect((await listed()).some((r) => r.request_id === requestIdOf(final.id))).toBe(true);
  });

  test("create({stream: true}): Anthropic's events in Anthropic's order", async () => {
    const before = await balance();
    const stream = await client.messages.create({
      model: "mock/ok",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    let usage: { input_tokens?: number | null; output_tokens: number } | null = null;
    let stop: string | null = null;
    let id = "";
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "message_start") id = e.message.id;
      if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
      if (e.type === "message_delta") {
        usage = e.usage;
        stop = e.delta.stop_reason;
      }
    }
    expect(types[0]).toBe("message_start");
    expect(types[1]).toBe("content_block_start");
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(types.filter((t) => t === "content_block_delta").length).toBeGreaterThan(0);
    expect(text).toBe("Hello from the mock upstream");
    expect(stop).toBe("max_tokens");
    // The upstream's usage is what is billed (the mock reports 11 prompt tokens).
    expect(usage).toMatchObject({ input_tokens: 11, output_tokens: 5 });
    const sent = mock.requests.at(-1)!;
    expect(sent.body.model).toBe("ok");
    expect(sent.authorization).toBe("Bearer sk-upstream-secret");
    const { input_tokens } = await client.messages.countTokens({
      model: "mock/ok",
      messages: [{ role: "user", content: "hi" }],
    });
    await expectSettled(before, "mock/ok", { input_tokens: 11, output_tokens: 5 }, input_tokens, 5);
    expect((await record(requestIdOf(id))).status).toBe("COMPLETED");
  });

  test("a mid-stream upstream failure: the SDK raises Anthropic's error event, nothing is charged", async () => {
    const before = await balance();
    const stream = await client.messages.create({
      model: "mock/midstream-error",
      max_tokens: 50,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    let id = "";
    let err: unknown;
    try {
      for await (const e of stream) if (e.type === "message_start") id = e.message.id;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Anthropic.APIError);
    const body = (err as InstanceType<typeof Anthropic.APIError>).error as {
      type: string;
      error: Record<string, unknown>;
    };
    expect(body.type).toBe("error");
    expect(body.error).toMatchObject({ type: "api_error", code: "submit_failed" });
    // What the upstream said stays in the operator's log.
    expect(JSON.stringify(body)).not.toContain("the model crashed");
    expect(await balance()).toEqual(before);
    expect((await record(requestIdOf(id))).status).toBe("FAILED");
  });

  test("a streamed call under an Idempotency-Key replays its events, charged once", async () => {
    const headers = { "Idempotency-Key": `stream-${crypto.randomUUID()}` };
    const body = {
      model: "sandbox/chat",
      max_tokens: 4,
      messages: [{ role: "user" as const, content: "again" }],
    };
    const first = await client.messages.stream(body, { headers }).finalMessage();
    const mid = await balance();
    const again = await client.messages.stream(body, { headers }).finalMessage();
    expect(again).toEqual(first);
    expect(await balance()).toEqual(mid);
  });

  test("count_tokens is free: no job, no hold", async () => {
    const before = await balance();
    const n = (await listed()).length;
    const counted = await client.messages.countTokens({
      model: "sandbox/chat",
      system: [{ type: "text", text: "Be kind." }],
      messages: [{ role: "user", content: "one two three" }],
    });
    // The sandbox's count: 3 + (4 + 3 tokens of "Be kind.") + (4 + 3 of "one two three").
    expect(counted).toEqual({ input_tokens: 3 + (4 + 3) + (4 + 3) });
    expect(await balance()).toEqual(before);
    expect((await listed()).length).toBe(n);
  });
});
