import { describe, expect, test } from "bun:test";
import { parseResponsesBody } from "../../src/responses/validate.ts";

/** The translation of a Responses body to the chat call it is (src/responses/validate.ts). */
describe("parseResponsesBody", () => {
  test("a string input is one user message; instructions come first as a system message", () => {
    const { chat, echo } = parseResponsesBody({ model: "m", input: "hi", instructions: "Be brief." });
    expect(chat.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
    expect(chat.maxTokens).toBeUndefined(); // the 4096 rule applies, as in chat
    expect(chat.stream).toBe(false);
    expect(chat.paramNames).toEqual({ input: "input", output: "max_output_tokens" });
    expect(echo).toEqual({
      instructions: "Be brief.",
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      store: false,
      metadata: {},
      user: null,
    });
  });

  test("items: roles kept, input_text and output_text parts become text parts", () => {
    const { chat } = parseResponsesBody({
      model: "m",
      input: [
        { role: "developer", content: "d" },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "a", annotations: [] }],
        },
        { role: "user", content: [{ type: "input_text", text: "u" }], id: "msg_1", status: "completed" },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "developer", content: "d" },
      { role: "assistant", content: [{ type: "text", text: "a" }] },
      { role: "user", content: [{ type: "text", text: "u" }] },
    ]);
  });

  test("the limit, sampling and user go to the call; Responses-only fields do not reach the upstream", () => {
    const { chat, echo } = parseResponsesBody({
      model: "m",
      input: "x",
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      store: true,
      metadata: { k: "v" },
      user: "u",
      include: ["reasoning.encrypted_content"],
      truncation: "auto",
      parallel_tool_calls: false,
      tools: [],
      tool_choice: "auto",
      reasoning: { effort: "low" },
      max_tokens: 9, // chat's name: never taken from a Responses body
      seed: 7, // unknown here: passed through, as the chat door passes its unknown fields
    });
    expect(chat.maxTokens).toBe(50);
    expect(chat.stream).toBe(true);
    expect(chat.passthrough).toStrictEqual({ temperature: 0.2, top_p: 0.9, user: "u", seed: 7 });
    expect(echo).toMatchObject({
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      store: true,
      metadata: { k: "v" },
    });
  });

  test("text.format: json_schema becomes chat's response_format; text is nothing", () => {
    const schema = { type: "object", properties: {} };
    const { chat } = parseResponsesBody({
      model: "m",
      input: "x",
      text: { format: { type: "json_schema", name: "r", schema, strict: true } },
    });
    expect(chat.passthrough.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "r", schema, strict: true },
    });
    expect(
      parseResponsesBody({ model: "m", input: "x", text: { format: { type: "text" } } }).chat.passthrough,
    ).toEqual({});
  });
});
