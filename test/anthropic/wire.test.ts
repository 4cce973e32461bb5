import { describe, expect, test } from "bun:test";
import { anthropicFormat, stopReason } from "../../src/anthropic/wire.ts";
import { DomainError } from "../../src/lib/errors.ts";

describe("Anthropic's answer shapes", () => {
  test("finish reasons as stop reasons", () => {
    expect(stopReason("length")).toBe("max_tokens");
    expect(stopReason("stop")).toBe("end_turn");
    expect(stopReason("content_filter")).toBe("refusal");
  });

  test("a stream: named events, the billed usage in message_delta, an error event on failure", () => {
    const w = anthropicFormat((e) => ({ type: "error", error: { type: "api_error", code: e.code } }))({
      jobId: "r1",
      model: "m",
      created: 0,
      promptTokens: 7,
    });
    const events = (text: string) =>
      text
        .trim()
        .split("\n\n")
        .map((block) => {
          const [event, data] = block.split("\n");
          return [event!.slice("event: ".length), JSON.parse(data!.slice("data: ".length))];
        });
    const open = events(w.opening());
    expect(open.map(([e]) => e)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(open[0]![1].message).toMatchObject({ id: "msg_r1", content: [], usage: { input_tokens: 7 } });
    expect(events(w.delta("Hi"))).toEqual([
      [
        "content_block_delta",
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      ],
    ]);
    const close = events(w.closing("", "length", { prompt_tokens: 5, completion_tokens: 2 }));
    expect(close.map(([e]) => e)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(close[1]![1]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "max_tokens", stop_sequence: null },
      usage: { input_tokens: 5, output_tokens: 2 },
    });
    expect(events(w.failure(new DomainError("submit_failed", "x"), ""))).toEqual([
      ["error", { type: "error", error: { type: "api_error", code: "submit_failed" } }],
    ]);
  });
});
