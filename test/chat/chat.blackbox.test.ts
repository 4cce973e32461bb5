import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import { startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";

const mock = startMockOpenAI();
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;
const model = (name: string, upstream: string) =>
  `[[models]]\nid = "mock/${name}"\nkind = "text"\nprovider = "mock"\nupstream_model = "${upstream}"\ninput_price_usd_micro = 1000000\noutput_price_usd_micro = 2000000\ncontext = 8192\n`;
beforeAll(async () => {
  const config = [
    `[providers.mock]\ntype = "openai"\nbase_url = "${mock.url}"\napi_key_env = "MOCK_UPSTREAM_KEY"\n`,
    ...["ok", "slow", "midstream-error", "no-usage", "429", "503", "400", "endless"].map((m) => model(m, m)),
  ].join("\n");
  process.env.MOCK_UPSTREAM_KEY = "sk-upstream-secret";
  s = await startFunded(config);
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
});
afterAll(() => {
  s.cleanup();
  mock.stop();
});
type Rec = {
  status: string;
  price: { charged_usd_micro: string; reserved_micro: string };
  usage: { prompt_tokens: number; completion_tokens: number };
};
const record = async (id: string) =>
  (await (await s.get(`/v1/requests/${id.replace("chatcmpl-", "")}`)).json()) as Rec;
const balance = async () =>
  (await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string };

describe("the openai SDK against gengate", () => {
  test("non-stream on the sandbox model: real token counts, billed exactly, listed with usage", async () => {
    const c = await client.chat.completions.create({
      model: "sandbox/chat",
      messages: [{ role: "user", content: "Hello there" }],
      max_tokens: 12,
    });
    expect(c.object).toBe("chat.completion");
    expect(c.choices[0]!.message.content).toStartWith('You said: "Hello there"');
    expect(c.choices[0]!.finish_reason).toBe("length");
    expect(c.usage).toEqual({ prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 });
    const r = await record(c.id);
    expect(r.status).toBe("COMPLETED");
    // ceil((9 x 500,000 + 12 x 1,500,000) / 1e6) = 23 micro-USD
    expect(r.price.charged_usd_micro).toBe("23");
    expect(r.usage).toEqual({ prompt_tokens: 9, completion_tokens: 12 });
  });

  test("stream with for await, usage chunk only when asked", async () => {
    const stream = await client.chat.completions.create({
      model: "sandbox/chat",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('You said: "Hi');
    expect(usage).toEqual({ prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 });
    const plain = await client.chat.completions.create({
      model: "sandbox/chat",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 3,
      stream: true,
    });
    for await (const chunk of plain) expect(chunk.usage ?? null).toBeNull();
  });

  test("chat.completions.stream().finalChatCompletion() through an OpenAI-compatible upstream", async () => {
    const runner = client.chat.completions.stream({
      model: "mock/ok",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 6,
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Hello from the mock upstream.");
    const sent = mock.requests.at(-1)!;
    expect(sent.body.model).toBe("ok");
    expect(sent.body.stream).toBe(true);
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    expect(sent.authorization).toBe("Bearer sk-upstream-secret");
    // The upstream reported 11 + 6 tokens: ceil((11 x 1,000,000 + 6 x 2,000,000) / 1e6) = 23.
    expect((await record(final.id)).price.charged_usd_micro).toBe("23");
  });

  test("missing upstream usage is billed on our counts, never above the reservation", async () => {
    const c = await client.chat.completions.create({
      model: "mock/no-usage",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 4,
    });
    const r = await record(c.id);
    expect(r.status).toBe("COMPLETED");
    expect(BigInt(r.price.charged_usd_micro)).toBeGreaterThan(0n);
    expect(BigInt(r.price.charged_usd_micro)).toBeLessThanOrEqual(BigInt(r.price.reserved_micro));
  });

  test.each([
    ["429", 503, "capacity_unavailable"],
    ["503", 503, "capacity_unavailable"],
    ["400", 502, "submit_failed"],
  ])("upstream %s -> %i %s, nothing charged", async (m, status, code) => {
    const before = await balance();
    let err: unknown;
    try {
      await client.chat.completions.create({
        model: `mock/${m}`,
        messages: [{ role: "user", content: "hi" }],
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(status);
    expect((err as APIError).code).toBe(code);
    if (status === 503) expect((err as APIError).headers?.get("retry-after")).toBe("7");
    const after = await balance();
    expect(after.balance_micro).toBe(before.balance_micro);
    expect(after.held_micro).toBe("0");
  });

  test("a mid-stream upstream error ends the stream with an error event; the call FAILS and charges nothing", async () => {
    const before = await balance();
    const res = await s.post("/v1/chat/completions", {
      model: "mock/midstream-error",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const text = await res.text();
    expect(text).toContain('"code":"submit_failed"');
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect((await balance()).balance_micro).toBe(before.balance_micro);
  });

  test("a running call is IN_PROGRESS from the start (never queued), then COMPLETED", async () => {
    const res = await s.post("/v1/chat/completions", {
      model: "sandbox/chat",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 6,
      stream: true,
      sandbox: { delay_ms: 150 },
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"chatcmpl-([^"]+)"/.exec(first)![1]!;
    const running = (await (await s.get(`/v1/requests/${id}`)).json()) as Record<string, unknown>;
    expect(running).toMatchObject({ status: "IN_PROGRESS", queue_position: null });
    expect(running.started_at).toBeString();
    while (!(await reader.read()).done) {}
    expect((await record(id)).status).toBe("COMPLETED");
  });

  test("a client that disconnects mid-stream is charged only for what was generated; the upstream is aborted", async () => {
    const abortedBefore = mock.aborted;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: "mock/endless",
        messages: [{ role: "user", content: "go on" }],
        max_tokens: 4000,
        stream: true,
      },
      { signal: controller.signal },
    );
    let id = "";
    let n = 0;
    try {
      for await (const chunk of stream) {
        id = chunk.id;
        if (++n === 10) controller.abort();
      }
    } catch {
      // aborted by us
    }
    const r = await (async () => {
      for (let i = 0; i < 100; i++) {
        const rec = await record(id);
        if (rec.status !== "IN_PROGRESS") return rec;
        await Bun.sleep(20);
      }
      throw new Error("not settled");
    })();
    expect(r.status).toBe("COMPLETED");
    const reserved = BigInt(r.price.reserved_micro);
    const charged = BigInt(r.price.charged_usd_micro);
    expect(charged).toBeGreaterThan(0n);
    expect(charged * 10n).toBeLessThan(reserved); // a few tokens, not the 4,000 reserved
    for (let i = 0; i < 50 && mock.aborted === abortedBefore; i++) await Bun.sleep(20);
    expect(mock.aborted).toBeGreaterThan(abortedBefore);
  });
});

describe("bad input: clear 4xx, nothing reserved", () => {
  const cases: [string, unknown, string][] = [
    ["messages not an array", { model: "sandbox/chat", messages: "hi" }, "bad_messages"],
    ["empty messages", { model: "sandbox/chat", messages: [] }, "bad_messages"],
    [
      "unknown role",
      { model: "sandbox/chat", messages: [{ role: "wizard", content: "hi" }] },
      "bad_messages",
    ],
    [
      "image content for a text model",
      {
        model: "sandbox/chat",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }],
      },
      "bad_messages",
    ],
    [
      "deeply nested content",
      { model: "sandbox/chat", messages: [{ role: "user", content: { a: { b: { c: [1] } } } }] },
      "bad_messages",
    ],
    [
      "huge message array",
      {
        model: "sandbox/chat",
        messages: Array.from({ length: 3000 }, () => ({ role: "user", content: "x" })),
      },
      "bad_messages",
    ],
    ["unknown model", { model: "acme/none", messages: [{ role: "user", content: "hi" }] }, "unknown_model"],
    [
      "a media model",
      { model: "sandbox/image", messages: [{ role: "user", content: "hi" }] },
      "unknown_model",
    ],
    [
      "max_tokens 0",
      { model: "sandbox/chat", messages: [{ role: "user", content: "hi" }], max_tokens: 0 },
      "validation_error",
    ],
    [
      "negative max_tokens",
      { model: "sandbox/chat", messages: [{ role: "user", content: "hi" }], max_tokens: -5 },
      "validation_error",
    ],
    [
      "max_tokens beyond the context",
      { model: "sandbox/chat", messages: [{ role: "user", content: "hi" }], max_tokens: 40000 },
      "validation_error",
    ],
    [
      "a prompt beyond the context",
      { model: "sandbox/chat", messages: [{ role: "user", content: "word ".repeat(40000) }] },
      "validation_error",
    ],
  ];
  test.each(cases)("%s -> 400 %s", async (_label, body, code) => {
    const before = await balance();
    const res = await s.post("/v1/chat/completions", body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(await balance()).toEqual(before);
  });

  test("non-UTF-8 bytes are refused cleanly", async () => {
    const res = await s.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(res.status).toBe(400);
  });

  test("Idempotency-Key reused with another body is 409 and reserves nothing", async () => {
    const headers = { "idempotency-key": `chat-${Date.now()}` };
    const a = await s.post(
      "/v1/chat/completions",
      { model: "sandbox/chat", messages: [{ role: "user", content: "a" }], max_tokens: 2 },
      { headers },
    );
    expect(a.status).toBe(200);
    const replay = await s.post(
      "/v1/chat/completions",
      { model: "sandbox/chat", messages: [{ role: "user", content: "a" }], max_tokens: 2 },
      { headers },
    );
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(await a.text());
    const before = await balance();
    const b = await s.post(
      "/v1/chat/completions",
      { model: "sandbox/chat", messages: [{ role: "user", content: "b" }], max_tokens: 2 },
      { headers },
    );
    expect(b.status).toBe(409);
    expect(await balance()).toEqual(before);
  });
});

describe("streaming is forwarded as it arrives", () => {
  test("chunks of a slow upstream reach the client spread over time, not in one burst at the end", async () => {
    const res = await s.post("/v1/chat/completions", {
      model: "mock/slow",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 8,
      stream: true,
    });
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (decoder.decode(value).includes('"content":"')) arrivals.push(performance.now());
    }
    // The mock waits 50 ms between words: forwarded chunks arrive over several hundred ms.
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(150);
  });
});
