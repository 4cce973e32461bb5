import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AIMessageChunk, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { startFunded } from "../helpers/api.ts";
import { billing } from "./helpers.ts";

/**
 * LangChain's ChatOpenAI (@langchain/openai 1.6.0) with `useResponsesApi: true`: its requests are
 * built by node_modules/@langchain/openai/dist/chat_models/responses.js (invocationParams) and
 * converters/responses.js (convertMessagesToResponsesInput: input_text parts), and its answers read
 * back by the same converters (response.created gives the id, response.completed the usage).
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let bill: ReturnType<typeof billing>;
const chat = (fields: { maxTokens?: number; streaming?: boolean } = {}) =>
  new ChatOpenAI({
    model: "sandbox/chat",
    apiKey: s.defaultKey!,
    configuration: { baseURL: `${s.url}/v1` },
    useResponsesApi: true,
    maxRetries: 0,
    ...fields,
  });
beforeAll(async () => {
  s = await startFunded();
  bill = billing(s);
});
afterAll(() => s?.cleanup());

describe("LangChain ChatOpenAI with useResponsesApi", () => {
  test("invoke: the reply, usage_metadata; billed exactly from usage", async () => {
    const before = await bill.balance();
    const msg = await chat({ maxTokens: 200 }).invoke([
      new SystemMessage("Be brief."),
      new HumanMessage("Hello from LangChain"),
    ]);
    expect(msg.text).toStartWith('You said: "Hello from LangChain"');
    const u = msg.usage_metadata!;
    expect(u.output_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
    await bill.settled(msg.id!, before, u);
    await bill.held(msg.id!, u.input_tokens, 200);
  });

  test("stream: chunks concatenated to the reply, usage on the last; billed exactly from usage", async () => {
    const before = await bill.balance();
    let full: AIMessageChunk | undefined;
    let chunks = 0;
    for await (const c of await chat().stream("Stream from LangChain")) {
      full = full ? full.concat(c) : c;
      chunks++;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(full!.text).toStartWith('You said: "Stream from LangChain"');
    const u = full!.usage_metadata!;
    expect(u.output_tokens).toBeGreaterThan(0);
    const id = (full!.response_metadata as { id?: string }).id ?? full!.id!;
    await bill.settled(id, before, u);
  });
});
