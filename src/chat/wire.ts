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

/** An error in the middle of a stream (the status line has been sent already). */
export function errorEvent(e: DomainError): string {
  const { code, message, type } = errorBody(e).error;
  return `data: ${JSON.stringify({ error: { code, message, type } })}\n\n`;
}

export const DONE_EVENT = "data: [DONE]\n\n";
