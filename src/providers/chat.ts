import type { Model } from "../catalog/model.ts";

/** One message of a chat call, as validated from the client (src/chat/validate.ts) and sent upstream. */
export interface ChatMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content: string | { type: "text"; text: string }[] | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: unknown[];
}

/** One piece of a streamed completion, already in the gateway's terms. */
export interface ChatDelta {
  /** Text to append to the reply ("" for a chunk carrying only a finish reason). */
  content: string;
  finishReason?: "stop" | "length" | "content_filter" | "tool_calls" | null;
  /** The upstream's token counts, when it sends them (usually with the last chunk). */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface ChatCall {
  model: Model;
  messages: ChatMessage[];
  /** The completion limit the gateway reserved for; the reply must not exceed it. */
  maxTokens: number;
  /** The name the client gave that limit (`max_tokens` when it sent none): kept where the model takes it. */
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  passthrough: Record<string, unknown>;
  sandbox: { delay_ms?: number; fail?: boolean } | null;
  signal: AbortSignal;
}

/** A provider that can answer chat completions, streamed (non-stream answers aggregate the stream). */
export interface ChatProvider {
  readonly name: string;
  chat(call: ChatCall): AsyncIterable<ChatDelta>;
}
