import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startFunded } from "../helpers/api.ts";
import { billing } from "./helpers.ts";

/**
 * The official `openai` JS SDK (7.57) against POST /v1/responses, unchanged but for its base URL and
 * key: `responses.create` (node_modules/openai/src/resources/responses/responses.ts), streamed and
 * not, and the `responses.stream()` helper (src/lib/responses/ResponseStream.ts), whose
 * finalResponse() needs response.completed and computes output_text from the output items.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;
let bill: ReturnType<typeof billing>;
beforeAll(async () => {
  s = await startFunded();
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
  bill = billing(s);
});
afterAll(() => s?.cleanup());

describe("openai JS responses.create", () => {
  test("non-stream: a response object with output_text and usage, billed exactly from usage", async () => {
    const before = await bill.balance();
    const r = await client.responses.create({
      model: "sandbox/chat",
      instructions: "Be brief.",
      input: "Hello there",
      max_output_tokens: 200,
      store: false,
      metadata: { ticket: "42" },
    });
    expect(r.object).toBe("response");
    expect(r.status).toBe("completed");
    expect(r.model).toBe("sandbox/chat");
    expect(r.output_text).toStartWith('You said: "Hello there"');
    expect(r.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(r.metadata).toEqual({ ticket: "42" });
    expect(r.incomplete_details).toBeNull();
    expect(r.usage!.output_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    await bill.settled(r.id, before, r.usage!);
    await bill.held(r.id, r.usage!.input_tokens, 200);
  });

  test("max_output_tokens cuts the reply: status incomplete, reason max_output_tokens", async () => {
    const before = await bill.balance();
    const r = await client.responses.create({
      model: "sandbox/chat",
      input: [{ role: "user", content: [{ type: "input_text", text: "Hi" }] }],
      max_output_tokens: 5,
    });
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output_text).toBe('You said: "Hi');
    expect(r.usage!.output_tokens).toBe(5);
    await bill.settled(r.id, before, r.usage!);
  });

  test("a conversation as items: earlier turns (output_text) and a developer message", async () => {
    const r = await client.responses.create({
      model: "sandbox/chat",
      input: [
        { role: "developer", content: "Answer in English." },
        { role: "user", content: "First" },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "ok", annotations: [] }],
        },
        { role: "user", content: "Second question" },
      ],
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(r.output_text).toStartWith('You said: "Second question"');
  });

  test("stream: every Responses event in order, sequence numbers, usage on response.completed", async () => {
    const before = await bill.balance();
    const stream = await client.responses.create({
      model: "sandbox/chat",
      input: "Stream me",
      stream: true,
    });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = "";
    let done: OpenAI.Responses.Response | null = null;
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.completed") done = ev.response;
    }
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(types.filter((t) => t === "response.output_text.delta").length).toBeGreaterThan(3);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(text).toStartWith('You said: "Stream me"');
    expect(done!.output[0]).toMatchObject({ type: "message", status: "completed" });
    expect(done!.usage!.output_tokens).toBeGreaterThan(0);
    await bill.settled(done!.id, before, done!.usage!);
    await bill.held(done!.id, done!.usage!.input_tokens); // no max_output_tokens: the 4096 rule
  });

  test("responses.stream().finalResponse(): the helper assembles the same response", async () => {
    const before = await bill.balance();
    const final = await client.responses
      .stream({ model: "sandbox/chat", input: "Helper", max_output_tokens: 64 })
      .finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toStartWith('You said: "Helper"');
    expect(final.usage!.input_tokens).toBeGreaterThan(0);
    await bill.settled(final.id, before, final.usage!);
  });

  test("Idempotency-Key: a retry replays the same response, charged once", async () => {
    const before = await bill.balance();
    const idem = `idem-${Date.now()}`;
    const first = await client.responses.create(
      { model: "sandbox/chat", input: "Once" },
      { headers: { "Idempotency-Key": idem } },
    );
    const again = await client.responses.create(
      { model: "sandbox/chat", input: "Once" },
      { headers: { "Idempotency-Key": idem } },
    );
    expect(again).toEqual(first);
    await bill.settled(first.id, before, first.usage!);
  });

  test("Idempotency-Key on a stream: the retry replays the events", async () => {
    const idem = `idem-stream-${Date.now()}`;
    const call = async () => {
      const types: string[] = [];
      let id = "";
      const stream = await client.responses.create(
        { model: "sandbox/chat", input: "Twice", stream: true },
        { headers: { "Idempotency-Key": idem } },
      );
      for await (const ev of stream) {
        types.push(ev.type);
        if (ev.type === "response.completed") id = ev.response.id;
      }
      return { types, id };
    };
    const first = await call();
    expect(await call()).toEqual(first);
    expect(first.types.at(-1)).toBe("response.completed");
  });
});
