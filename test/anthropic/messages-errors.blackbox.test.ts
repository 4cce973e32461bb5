import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startFunded } from "../helpers/api.ts";

/**
 * Refused calls through `@anthropic-ai/sdk`: each raises the SDK's own typed error (src/core/error.ts,
 * APIError.generate by status) from Anthropic's error body, with gengate's code in `error.error.code`,
 * and nothing is charged. The SDK retries 408, 409, 429 and 5xx twice by default unless the answer
 * says `x-should-retry: false` (src/client.ts shouldRetry): a 402 or a 409 must be sent once.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let client: Anthropic;
/** Requests the SDK sent (retries included). */
let sent = 0;
const counting: typeof fetch = Object.assign(
  async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    sent++;
    return await fetch(input, init);
  },
  { preconnect: fetch.preconnect },
);
beforeAll(async () => {
  s = await startFunded();
  // The SDK's default retries (2) kept on: a retried refusal would show in `sent`.
  client = new Anthropic({ apiKey: s.defaultKey!, baseURL: s.url, fetch: counting });
});
afterAll(() => s.cleanup());

const balance = async () =>
  ((await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string })
    .balance_micro;

/** The SDK's error for a call, and how many requests the call sent. */
async function refused(call: () => Promise<unknown>) {
  const before = sent;
  try {
    await call();
  } catch (err) {
    expect(err).toBeInstanceOf(Anthropic.APIError);
    const e = err as InstanceType<typeof Anthropic.APIError>;
    const body = e.error as {
      type: string;
      error: { type: string; code: string; message: string; param?: string };
    };
    expect(body.type).toBe("error");
    return { err: e, body: body.error, requests: sent - before };
  }
  throw new Error("expected the SDK to throw");
}
const hi: Anthropic.MessageParam[] = [{ role: "user", content: "hi" }];

describe("@anthropic-ai/sdk: refused calls raise its typed errors, gengate's code inside", () => {
  test("a wrong key: AuthenticationError (401), not retried", async () => {
    const bad = new Anthropic({ apiKey: "gk_wrong", baseURL: s.url, fetch: counting });
    const r = await refused(() =>
      bad.messages.create({ model: "sandbox/chat", max_tokens: 5, messages: hi }),
    );
    expect(r.err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(r.body).toMatchObject({ type: "authentication_error", code: "unauthorized" });
    expect(r.requests).toBe(1);
    const c = await refused(() => bad.messages.countTokens({ model: "sandbox/chat", messages: hi }));
    expect(c.err).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  test("max_tokens missing: BadRequestError validation_error naming max_tokens", async () => {
    const before = await balance();
    const r = await refused(() =>
      client.messages.create({
        model: "sandbox/chat",
        messages: hi,
      } as unknown as Anthropic.MessageCreateParamsNonStreaming),
    );
    expect(r.err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(r.body).toMatchObject({
      type: "invalid_request_error",
      code: "validation_error",
      param: "max_tokens",
    });
    expect(r.err.headers?.get("x-should-retry")).toBe("false");
    expect(await balance()).toBe(before);
  });

  test.each([
    [
      "an image block",
      [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }],
      "messages[0].content[0]",
      'a "image" block',
    ],
    [
      "a tool_result block",
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "42" }] }],
      "messages[0].content[0]",
      'a "tool_result" block',
    ],
    [
      "a system role in messages",
      [{ role: "system", content: "x" }],
      "messages[0].role",
      '"user" or "assistant"',
    ],
    ["no messages", [], "messages", "must not be empty"],
  ])("%s: BadRequestError bad_messages saying what is accepted", async (_name, messages, param, says) => {
    const r = await refused(() =>
      client.messages.create({
        model: "sandbox/chat",
        max_tokens: 5,
        messages,
      } as Anthropic.MessageCreateParamsNonStreaming),
    );
    expect(r.err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(r.body).toMatchObject({ code: "bad_messages", param });
    expect(r.body.message).toContain(says);
    if (param.includes("content")) expect(r.body.message).toContain('text blocks only ({"type": "text"');
  });

  test("tools, a temperature over 1, too many stop sequences: validation_error", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: [{ name: "f", input_schema: { type: "object" } }] }, "tools"],
      [{ temperature: 1.5 }, "temperature"],
      [{ stop_sequences: ["a", "b", "c", "d", "e"] }, "stop_sequences"],
      [{ max_tokens: 0 }, "max_tokens"],
    ];
    for (const [extra, param] of cases) {
      const r = await refused(() =>
        client.messages.create({
          model: "sandbox/chat",
          max_tokens: 5,
          messages: hi,
          ...extra,
        } as Anthropic.MessageCreateParamsNonStreaming),
      );
      expect(r.err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(r.body).toMatchObject({ code: "validation_error", param });
    }
  });

  test("an unknown model and a media model: 400 unknown_model, the media one naming its door", async () => {
    const unknown = await refused(() =>
      client.messages.create({ model: "acme/none", max_tokens: 5, messages: hi }),
    );
    expect(unknown.body).toMatchObject({ code: "unknown_model", param: "model" });
    const media = await refused(() =>
      client.messages.create({ model: "sandbox/image", max_tokens: 5, messages: hi }),
    );
    expect(media.err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(media.body.message).toContain("POST /v1/queue/sandbox/image");
    const counted = await refused(() =>
      client.messages.countTokens({ model: "sandbox/image", messages: hi }),
    );
    expect(counted.body.code).toBe("unknown_model");
  });

  test("max_tokens over the model's context: 400 before anything is held", async () => {
    const before = await balance();
    // Streamed: the SDK itself refuses a non-streamed call whose max_tokens could take over 10
    // minutes (over 21,333 tokens: src/client.ts calculateNonstreamingTimeout) before sending it.
    const r = await refused(() =>
      client.messages.create({ model: "sandbox/chat", max_tokens: 40_000, messages: hi, stream: true }),
    );
    expect(r.err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(r.body).toMatchObject({ code: "validation_error" });
    expect(r.body.message).toContain("32768");
    expect(await balance()).toBe(before);
  });

  test("an upstream failure before any output: 502 submit_failed, nothing charged, the job FAILED", async () => {
    const before = await balance();
    const quiet = new Anthropic({ apiKey: s.defaultKey!, baseURL: s.url, maxRetries: 0 });
    const r = await refused(() =>
      quiet.messages.create({
        model: "sandbox/chat",
        max_tokens: 5,
        messages: hi,
        sandbox: { fail: true },
      } as Anthropic.MessageCreateParamsNonStreaming),
    );
    expect(r.err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(r.err.status).toBe(502);
    expect(r.body).toMatchObject({ type: "api_error", code: "submit_failed" });
    // request-id (the SDK's requestID) is the failed job's id.
    const job = (await (await s.get(`/v1/requests/${r.err.requestID}`)).json()) as { status: string };
    expect(job.status).toBe("FAILED");
    expect(await balance()).toBe(before);
  });

  test("402: PaymentRequiredError naming the billing page, sent once", async () => {
    const res = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "broke", currency: "USD", credit: "0.000001" }),
    });
    const { key } = (await res.json()) as { key: string };
    const broke = new Anthropic({ apiKey: key, baseURL: s.url, fetch: counting });
    const r = await refused(() =>
      broke.messages.create({ model: "sandbox/chat", max_tokens: 100, messages: hi }),
    );
    expect(r.err).toBeInstanceOf(Anthropic.PaymentRequiredError);
    expect(r.body).toMatchObject({ type: "billing_error", code: "insufficient_balance" });
    expect(r.body.message).toContain("/console/billing");
    expect((r.body as { billing_url?: string }).billing_url).toContain("/console/billing");
    expect(r.err.headers?.get("x-should-retry")).toBe("false");
    expect(r.requests).toBe(1);
    // count_tokens is free: it still answers.
    expect((await broke.messages.countTokens({ model: "sandbox/chat", messages: hi })).input_tokens).toBe(8);
  });

  test("Idempotency-Key: the same body replays the message (charged once); another body is a ConflictError sent once", async () => {
    const headers = { "Idempotency-Key": `anthropic-${crypto.randomUUID()}` };
    const body = { model: "sandbox/chat", max_tokens: 5, messages: hi };
    const before = BigInt(await balance());
    const first = await client.messages.create(body, { headers });
    const mid = BigInt(await balance());
    const again = await client.messages.create(body, { headers });
    expect(again).toEqual(first);
    expect(BigInt(await balance())).toBe(mid);
    expect(mid).toBeLessThan(before);
    const r = await refused(() => client.messages.create({ ...body, max_tokens: 6 }, { headers }));
    expect(r.err).toBeInstanceOf(Anthropic.ConflictError);
    expect(r.body).toMatchObject({ code: "idempotency_conflict" });
    expect(r.err.headers?.get("x-should-retry")).toBe("false");
    expect(r.requests).toBe(1);
  });
});
