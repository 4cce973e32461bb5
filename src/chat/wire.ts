import { errorBody } from "../lib/error-body.ts";
import type { DomainError } from "../lib/errors.ts";
/** OpenAI's chat completion shapes, as the gateway answers them (one call's fixed fields). */
export interface ChatWire {
  id: string;
  created: number;
  model: string;
  /** stream_options.include_usage: every chunk carries "usage" (null until the last one). */
  includeUsage: boolean;
}

export type Usage = { prompt_tokens: number; completion_tokens: number };

/** A non-streamed answer: chat.completion. */
export function completionBody(w: ChatWire, content: string, finish: string, u: Usage): string {
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
export function chunkEvent(w: ChatWire, delta: Record<string, unknown>, finishReason: string | null): string {
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
export function usageEvent(w: ChatWire, u: Usage): string {
  return `data: ${JSON.stringify({ id: w.id, object: "chat.completion.chunk", created: w.created, model: w.model, choices: [], usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens } })}\n\n`;
}

/** What a stream tells of an error once its status line is sent: the contract's code, message, type. */
export function streamError(e: DomainError): { code: string; message: string; type: string } {
  const { code, message, type } = errorBody(e).error;
  return { code, message, type };
}

/** An error in the middle of a stream (the status line has been sent already). */
export function errorEvent(e: DomainError): string {
  return `data: ${JSON.stringify({ error: streamError(e) })}\n\n`;
}

export const DONE_EVENT = "data: [DONE]\n\n";

/**
 * How one door writes a text call's reply: the whole answer, or a stream's events. The call's flow
 * (src/chat/service.ts completeChat: reservation, upstream, settlement) is the same for every door;
 * only this differs (chat completions here, the Responses door's src/responses/wire.ts).
 */
export interface ReplyFormat {
  /** A non-streamed answer. */
  whole(content: string, finish: string, u: Usage): string;
  /** A stream's first events, before any text. */
  opening(): string;
  /** One piece of text. */
  delta(text: string): string;
  /** A stream's last events, after its settlement. */
  closing(content: string, finish: string, u: Usage): string;
  /** A stream's last events when the upstream failed mid-stream (nothing charged). */
  failure(e: DomainError, content: string): string;
}

/** The fixed fields of one call, known once its job is opened. */
export interface CallInfo {
  jobId: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** The prompt's tokens as reserved (exact for the sandbox, an over-estimate for an upstream). */
  promptTokens: number;
}

export type ReplyFormatOf = (call: CallInfo) => ReplyFormat;

/** The chat completions format (/v1/chat/completions, the studio). */
export function chatFormat(includeUsage: boolean): ReplyFormatOf {
  return ({ jobId, created, model }) => {
    const w: ChatWire = { id: `chatcmpl-${jobId}`, created, model, includeUsage };
    return {
      whole: (content, finish, u) => completionBody(w, content, finish, u),
      opening: () => chunkEvent(w, { role: "assistant", content: "" }, null),
      delta: (text) => chunkEvent(w, { content: text }, null),
      closing: (_content, finish, u) =>
        chunkEvent(w, {}, finish) + (includeUsage ? usageEvent(w, u) : "") + DONE_EVENT,
      failure: (e) => errorEvent(e) + DONE_EVENT,
    };
  };
}
