import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { startFunded } from "../helpers/api.ts";
import { billing } from "./helpers.ts";

/**
 * The Vercel AI SDK (ai 7.0.173, @ai-sdk/openai 4.0.118) against POST /v1/responses: its default
 * `openai(id)` model is the Responses one (node_modules/@ai-sdk/openai/src/openai-provider.ts:
 * `provider = function (modelId) { return createLanguageModel(modelId) }`, an
 * OpenAIResponsesLanguageModel), whose strict zod schemas
 * (src/responses/openai-responses-api.ts: openaiResponsesResponseSchema, openaiResponsesChunkSchema)
 * parse what gengate answers.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let openai: ReturnType<typeof createOpenAI>;
let bill: ReturnType<typeof billing>;
beforeAll(async () => {
  s = await startFunded();
  openai = createOpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey! });
  bill = billing(s);
});
afterAll(() => s?.cleanup());

describe("the AI SDK's default openai(id) model", () => {
  test("generateText: text, usage, finish reason; billed exactly from usage", async () => {
    const before = await bill.balance();
    const r = await generateText({
      model: openai("sandbox/chat"),
      system: "Be brief.",
      prompt: "Hello from the AI SDK",
      maxOutputTokens: 300,
      maxRetries: 0,
    });
    expect(r.text).toStartWith('You said: "Hello from the AI SDK"');
    expect(r.finishReason).toBe("stop");
    const input = r.usage.inputTokens!;
    const output = r.usage.outputTokens!;
    expect(output).toBeGreaterThan(0);
    expect(r.usage.totalTokens).toBe(input + output);
    expect(r.response.id).toStartWith("resp_");
    expect(r.response.modelId).toBe("sandbox/chat");
    await bill.settled(r.response.id, before, { input_tokens: input, output_tokens: output });
    await bill.held(r.response.id, input, 300);
  });

  test("generateText cut by maxOutputTokens: finishReason length", async () => {
    const r = await generateText({
      model: openai("sandbox/chat"),
      prompt: "Hi",
      maxOutputTokens: 4,
      maxRetries: 0,
    });
    expect(r.finishReason).toBe("length");
    expect(r.usage.outputTokens).toBe(4);
  });

  test("streamText: deltas, usage at the end; billed exactly from usage", async () => {
    const before = await bill.balance();
    const errors: unknown[] = [];
    const r = streamText({
      model: openai("sandbox/chat"),
      messages: [
        { role: "user", content: "First" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "Streamed question" },
      ],
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    let text = "";
    let parts = 0;
    for await (const delta of r.textStream) {
      text += delta;
      parts++;
    }
    expect(errors).toEqual([]);
    expect(parts).toBeGreaterThan(3);
    expect(text).toStartWith('You said: "Streamed question"');
    const usage = await r.usage;
    expect(await r.finishReason).toBe("stop");
    const { id } = await r.response;
    await bill.settled(id, before, { input_tokens: usage.inputTokens!, output_tokens: usage.outputTokens! });
  });
});
