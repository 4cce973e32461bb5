import { afterEach, describe, expect, test } from "bun:test";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { makeTestApp } from "../helpers/context.ts";
import {
  chatStream,
  type IdleCloseUpstream,
  startIdleCloseUpstream,
} from "../helpers/idle-close-upstream.ts";
import { mockTextModel } from "../helpers/mock-openai.ts";
import { openaiMediaProvider } from "./openai/helpers.ts";

// The keep-alive race (src/providers/upstream-client.ts, fetchUpstream): the upstream closes a pooled
// connection as idle just as the next request is written on it. That request was never read, so it
// is sent once more on a new connection: the call succeeds and the upstream did the work once.

let up: IdleCloseUpstream | null = null;
afterEach(() => up?.stop());

const chatAnswer = () => ({ contentType: "text/event-stream", body: chatStream(["Hi", " there", "."]) });

describe("a connection the upstream closes as idle just as it is reused", () => {
  test("chat: the second call, on the reused connection, is 200 and the upstream ran it once", async () => {
    up = startIdleCloseUpstream({ answer: chatAnswer });
    const t = await makeTestApp({
      providers: { idle: { type: "openai", base_url: `${up.url}/v1` } },
      models: [mockTextModel("idle", { id: "idle/chat", provider: "idle" })],
    });
    await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
    const chat = () =>
      t.request("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "idle/chat",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 8,
        }),
      });
    expect((await chat()).status).toBe(200);
    expect(up.processed).toBe(1);
    const second = await chat();
    expect(second.status).toBe(200);
    expect(
      ((await second.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
    ).toBe("Hi there.");
    // Closed unread on the pooled connection, then answered once on a new one.
    expect(up.processed).toBe(2);
    expect(up.arrivals).toBe(3);
    expect(up.connections).toBe(2);
  });

  test("an image submit (synchronous, not resumable) completes and is generated once", async () => {
    const png = encodePng(8, 8, 1);
    up = startIdleCloseUpstream({
      answer: () => ({
        contentType: "application/json",
        body: JSON.stringify({ created: 1, data: [{ b64_json: Buffer.from(png).toString("base64") }] }),
      }),
    });
    const provider = openaiMediaProvider(`${up.url}/v1`, "idle");
    const job = (id: string) => ({
      id,
      model: {
        id: "idle/img",
        kind: "image",
        provider: "idle",
        upstream_model: "dall-e-2",
        input_map: {},
      } as never,
      input: { prompt: "x" },
      attempt: 1,
      upstreamId: null,
      signal: new AbortController().signal,
      log() {},
      setUpstreamId: async () => {},
      // No image_url in the input: the provider reads no input file.
      readInput: () => Promise.reject(new Error("no input file to read")),
    });
    expect((await provider.run(job("a"))).outputs).toHaveLength(1);
    expect((await provider.run(job("b"))).outputs).toHaveLength(1);
    // Each submit on a connection of its own: none was written on one the upstream closed as idle.
    expect(up.processed).toBe(2);
    expect(up.arrivals).toBe(2);
    expect(up.connections).toBe(2);
  });
});
