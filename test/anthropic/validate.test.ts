import { describe, expect, test } from "bun:test";
import { parseCountTokensBody, parseMessagesBody } from "../../src/anthropic/validate.ts";
import { DomainError } from "../../src/lib/errors.ts";

const base = { model: "sandbox/chat", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

describe("an Anthropic Messages body made the chat request", () => {
  test("system first, text blocks as text parts, the sampling fields and stop_sequences as OpenAI's", () => {
    const req = parseMessagesBody({
      ...base,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "a" }] },
        { role: "assistant", content: "b" },
      ],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ["END"],
      metadata: { user_id: "u" },
      stream: true,
    });
    expect(req.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "assistant", content: "b" },
    ]);
    expect(req.maxTokens).toBe(10);
    expect(req.maxTokensParam).toBe("max_tokens");
    expect(req.stream).toBe(true);
    // metadata changes nothing and is not sent upstream; an unknown field is, as the chat door does.
    expect(req.passthrough).toEqual({ temperature: 0.3, top_p: 0.9, top_k: 5, stop: ["END"] });
  });

  test("tools, thinking and tool choice that ask for nothing are dropped; any that ask are refused", () => {
    const quiet = parseMessagesBody({
      ...base,
      tools: [],
      thinking: { type: "disabled" },
      tool_choice: { type: "none" },
    });
    expect(quiet.passthrough).toEqual({});
    for (const ask of [
      { thinking: { type: "enabled", budget_tokens: 1024 } },
      { tool_choice: { type: "auto" } },
      { tools: [{ name: "f" }] },
      { container: "c" },
    ])
      expect(() => parseMessagesBody({ ...base, ...ask })).toThrow(/text only/);
  });

  test("count_tokens needs no max_tokens; a Messages call does", () => {
    const { max_tokens: _, ...noLimit } = base;
    expect(parseCountTokensBody(noLimit).maxTokens).toBeUndefined();
    expect(() => parseMessagesBody(noLimit)).toThrow(DomainError);
  });

  test("sandbox controls pass as the chat door's", () => {
    expect(parseMessagesBody({ ...base, sandbox: { fail: true } }).sandbox).toEqual({
      fail: true,
      delay_ms: undefined,
    });
  });
});
