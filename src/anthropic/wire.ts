import type { ReplyFormatOf, Usage } from "../chat/wire.ts";
import type { DomainError } from "../lib/errors.ts";

/**
 * Anthropic's Messages format for a chat call (docs.anthropic.com "Messages" and "Streaming
 * Messages"; what @anthropic-ai/sdk/src/lib/MessageStream.ts accumulates). The message id is
 * `msg_` + the request id, as the chat door's is `chatcmpl-` + the request id, so the id a client
 * holds names its job in GET /v1/requests once the prefix is dropped.
 *
 * `errorBody` renders a mid-stream failure in Anthropic's error shape; the route passes the doors'
 * renderer (src/http/doors.ts), which a service may not import.
 */
export function anthropicFormat(errorBody: (e: DomainError) => Record<string, unknown>): ReplyFormatOf {
  return ({ jobId, model, promptTokens }) => {
    const id = `msg_${jobId}`;
    const usage = (u: Usage) => ({ input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens });
    return {
      whole: (content, finish, u) =>
        JSON.stringify({
          id,
          type: "message",
          role: "assistant",
          model,
          content: [{ type: "text", text: content }],
          stop_reason: stopReason(finish),
          stop_sequence: null,
          usage: usage(u),
        }),
      opening: () =>
        event("message_start", {
          type: "message_start",
          message: {
            id,
            type: "message",
            role: "assistant",
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            // The figure reserved; message_delta carries the billed one.
            usage: { input_tokens: promptTokens, output_tokens: 0 },
          },
        }) +
        event("content_block_start", {
          type: "content_block_start",
          index: 0,
          content_block: { type: "text", text: "" },
        }) +
        event("ping", { type: "ping" }),
      delta: (text) =>
        event("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text },
        }),
      closing: (_content, finish, u) =>
        event("content_block_stop", { type: "content_block_stop", index: 0 }) +
        event("message_delta", {
          type: "message_delta",
          delta: { stop_reason: stopReason(finish), stop_sequence: null },
          usage: usage(u),
        }) +
        event("message_stop", { type: "message_stop" }),
      failure: (e) => event("error", errorBody(e)),
    };
  };
}

/**
 * OpenAI's finish reasons as Anthropic's stop reasons. An OpenAI-compatible upstream answers "stop"
 * for a natural end and for a stop sequence alike, so "stop_sequence" cannot be told apart: end_turn.
 */
export function stopReason(finish: string): string {
  switch (finish) {
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    case "tool_calls":
      return "tool_use";
    default:
      return "end_turn";
  }
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
