import {
  type CallInfo,
  type ReplyFormat,
  type ReplyFormatOf,
  streamError,
  type Usage,
} from "../chat/wire.ts";
import type { DomainError } from "../lib/errors.ts";
import type { ResponsesEcho } from "./validate.ts";

/**
 * OpenAI's Responses shapes as the gateway answers them: one `message` output item holding one
 * `output_text` part. Ids are the job's: `resp_<request id>` for the response, `msg_<request id>` for
 * its message, so `GET /v1/requests/<request id>` finds the call.
 */

/** A reply cut by its token limit is "incomplete" (OpenAI: incomplete_details.reason). */
function incompleteReason(finish: string): string | null {
  if (finish === "length") return "max_output_tokens";
  if (finish === "content_filter") return "content_filter";
  return null;
}

function usageOf(u: Usage) {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

type Status = "in_progress" | "completed" | "incomplete" | "failed";

/** The Responses format of one call (the response object and its stream events). */
export function responsesFormat(echo: ResponsesEcho): ReplyFormatOf {
  return (call: CallInfo): ReplyFormat => {
    const id = `resp_${call.jobId}`;
    const itemId = `msg_${call.jobId}`;
    let seq = 0;
    const part = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });
    const item = (status: Status, content: ReturnType<typeof part>[]) => ({
      id: itemId,
      type: "message",
      status,
      role: "assistant",
      content,
    });
    const response = (
      status: Status,
      output: ReturnType<typeof item>[],
      extra: { usage?: Usage; reason?: string | null; error?: { code: string; message: string } },
    ) => ({
      id,
      object: "response",
      created_at: call.created,
      status,
      background: false,
      error: extra.error ?? null,
      incomplete_details: extra.reason ? { reason: extra.reason } : null,
      instructions: echo.instructions,
      max_output_tokens: echo.max_output_tokens,
      model: call.model,
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      service_tier: "default",
      store: echo.store,
      temperature: echo.temperature,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [],
      top_p: echo.top_p,
      truncation: "disabled",
      usage: extra.usage ? usageOf(extra.usage) : null,
      user: echo.user,
      metadata: echo.metadata,
    });
    /** The finished response: completed, or incomplete when the token limit cut it. */
    const final = (content: string, finish: string, u: Usage) => {
      const reason = incompleteReason(finish);
      const status: Status = reason ? "incomplete" : "completed";
      return { status, body: response(status, [item(status, [part(content)])], { usage: u, reason }) };
    };
    const event = (type: string, fields: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
    const at = { item_id: itemId, output_index: 0, content_index: 0 };

    return {
      whole: (content, finish, u) => JSON.stringify(final(content, finish, u).body),
      opening: () =>
        event("response.created", { response: response("in_progress", [], {}) }) +
        event("response.in_progress", { response: response("in_progress", [], {}) }) +
        event("response.output_item.added", { output_index: 0, item: item("in_progress", []) }) +
        event("response.content_part.added", { ...at, part: part("") }),
      delta: (text) => event("response.output_text.delta", { ...at, delta: text, logprobs: [] }),
      closing: (content, finish, u) => {
        const { status, body } = final(content, finish, u);
        return (
          event("response.output_text.done", { ...at, text: content, logprobs: [] }) +
          event("response.content_part.done", { ...at, part: part(content) }) +
          event("response.output_item.done", { output_index: 0, item: item(status, [part(content)]) }) +
          event(status === "completed" ? "response.completed" : "response.incomplete", { response: body })
        );
      },
      // response.failed carries the response's end; the `error` event after it is what makes the
      // clients raise. It has both shapes OpenAI sends: code and message at the top (its documented
      // error event) and nested under `error` (its stream errors after a 200), since openai-node
      // raises on `event: error` but openai-python only on a data with an `error` field
      // (openai/_streaming.py: `if is_mapping(data) and data.get("error")`).
      failure: (e: DomainError) => {
        const err = streamError(e);
        return (
          event("response.failed", {
            response: response("failed", [], { error: { code: err.code, message: err.message } }),
          }) +
          event("error", {
            code: err.code,
            message: err.message,
            param: null,
            error: { ...err, param: null },
          })
        );
      },
    };
  };
}
