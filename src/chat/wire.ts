import { errorBody } from "../http/errors.ts";
import type { DomainError } from "../lib/errors.ts";

/**
 * How a door writes one chat call's answer: OpenAI's chat format (`openAIChatFormat`, below) for
 * /v1/chat/completions and the studio, Anthropic's Messages for /v1/messages (src/anthropic/wire.ts).
 * completeChat decides what happens (billing, the stream's order, a failure's settlement); a format
 * only renders it.
 */
export type ChatFormat = (call: ChatCallInfo) => ChatWriter;

/** One call's fixed facts, known once its job is open. */
export interface ChatCallInfo {
  /** The job's id: the request id of GET /v1/requests. */
  requestId: string;
  /** The catalog model id. */
  model: string;
  /** Unix seconds. */
  created: number;
  /** The prompt's tokens as reserved (exact for the sandbox, an over-estimate for an upstream). */
  promptTokens: number;
}

export interface ChatWriter {
  /** A non-streamed reply, whole. */
  whole(content: string, finish: string, u: Usage): string;
  /** A stream's first events, sent before any text. */
  open(): string;
  /** A piece of text, streamed. */
  piece(text: string): string;
  /** A stream's last events, after its settlement. */
  close(finish: string, u: Usage): string;
  /** A failure in the middle of a stream (the status line has been sent already), ending it. */
  failure(e: DomainError): string;
}

/** OpenAI's chat completion format; usage is streamed only with stream_options.include_usage. */
export const openAIChatFormat =
  (includeUsage: boolean): ChatFormat =>
  ({ requestId, created, model }) => {
    const w: ChatWire = { id: `chatcmpl-${requestId}`, created, model, includeUsage };
    return {
      whole: (content, finish, u) => completionBody(w, content, finish, u),
      open: () => chunkEvent(w, { role: "assistant", content: "" }, null),
      piece: (text) => chunkEvent(w, { content: text }, null),
      close: (finish, u) => chunkEvent(w, {}, finish) + (includeUsage ? usageEvent(w, u) : "") + DONE_EVENT,
      failure: (e) => errorEvent(e) + DONE_EVENT,
    };
  };

/** OpenAI's chat completion shapes, as the gateway answers them (one call's fixed fields). */
interface ChatWire {
  id: string;
  created: number;
  model: string;
  /** stream_options.include_usage: every chunk carries "usage" (null until the last one). */
  includeUsage: boolean;
}

export type Usage = { prompt_tokens: number; completion_tokens: number };

/** A non-streamed answer: chat.completion. */
function completionBody(w: ChatWire, content: string, finish: string, u: Usage): string {
  return JSON.stringify({
    id: w.id,
    object: "chat.completion",
    created: w.created,
    model: w.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens },
    system_fingerprint: null,
  });
}

/** One server-sent chat.completion.chunk event. */
function chunkEvent(w: ChatWire, delta: Record<string, unknown>, finishReason: string | null): string {
  return `data: ${JSON.stringify({
    id: w.id,
    object: "chat.completion.chunk",
    created: w.created,
    model: w.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(w.includeUsage ? { usage: null } : {}),
  })}\n\n`;
}

/** The usage event sent last with stream_options.include_usage. */
function usageEvent(w: ChatWire, u: Usage): string {
  return `data: ${JSON.stringify({ id: w.id, object: "chat.completion.chunk", created: w.created, model: w.model, choices: [], usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens } })}\n\n`;
}

/** An error in the middle of a stream (the status line has been sent already). */
function errorEvent(e: DomainError): string {
  const { code, message, type } = errorBody(e).error;
  return `data: ${JSON.stringify({ error: { code, message, type } })}\n\n`;
}

const DONE_EVENT = "data: [DONE]\n\n";
