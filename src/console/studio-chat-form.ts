/**
 * The studio chat's form fields (studio-chat-pages.ts): `messages`, the conversation so far as a
 * JSON array, `message`, the one being typed, and `conversation`, the ids of the earlier replies;
 * the playground's `system` prompt and parameters `temperature` and `max_tokens`, sent with the call.
 */
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import type { FormLike } from "../studio/form.ts";
import { field } from "./kit.ts";

/** At most this much JSON is read from `messages` (the API's own limits apply after). */
const MAX_MESSAGES_CHARS = 256 * 1024;
/** At most this many earlier replies count in a conversation's total. */
const MAX_CONVERSATION = 500;
/** The system prompt's cap: 32 Ki characters (about 8k tokens), an eighth of the conversation's. */
export const MAX_SYSTEM_CHARS = 32 * 1024;
/** The API's bounds for temperature (parseChatBody: [0, 2]). */
export const TEMPERATURE_MAX = 2;

/** The `messages` field: a JSON array of chat messages ("" is none). */
function historyOf(text: string): unknown {
  if (text.trim() === "") return [];
  if (text.length > MAX_MESSAGES_CHARS)
    throw new DomainError("validation_error", "The conversation is too long.", { param: "messages" });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError("validation_error", "messages must be a JSON array of chat messages.", {
      param: "messages",
    });
  }
}

/**
 * The conversation a form sends: `messages` (app.js sends the whole conversation there) followed by
 * `message` when there is one (the page's own form without script, or the message being typed).
 * Null when there is nothing to send.
 */
export function conversationOfForm(form: FormLike): unknown | null {
  const history = historyOf(field(form, "messages"));
  const message = field(form, "message");
  if (message.trim() === "") return Array.isArray(history) && history.length === 0 ? null : history;
  // Not an array: passed on as it is, for the chat's own validation to refuse.
  return Array.isArray(history) ? [...history, { role: "user", content: message }] : history;
}

/** The ids of the conversation's earlier replies (malformed ones are ignored). */
export function conversationOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split(",")
        .map((x) => x.trim())
        .filter((x) => UUID_PATTERN.test(x)),
    ),
  ].slice(0, MAX_CONVERSATION);
}

/** The chat's parameters as typed (kept on the page when a message is refused). */
export interface ChatParamsText {
  system: string;
  temperature: string;
  max_tokens: string;
}

/** The parameter fields' text, as the form sent them. */
export function chatParamsText(form: FormLike): ChatParamsText {
  return {
    system: field(form, "system"),
    temperature: field(form, "temperature").trim(),
    max_tokens: field(form, "max_tokens").trim(),
  };
}

const invalid = (message: string, param: string) => new DomainError("validation_error", message, { param });

/**
 * The chat body the form describes: the system prompt first (when there is one), then the
 * conversation and the typed message; `temperature` and `max_tokens` when given, bounded as the API
 * bounds them (temperature 0..2; max_tokens a whole number from 1 to the model's context, which the
 * API checks again with the prompt). Null when there is no message to send.
 */
export function chatBodyOfForm(form: FormLike, context: number | null): Record<string, unknown> | null {
  const conversation = conversationOfForm(form);
  if (conversation === null) return null;
  const p = chatParamsText(form);
  if (p.system.length > MAX_SYSTEM_CHARS)
    throw invalid(`The system prompt is longer than ${MAX_SYSTEM_CHARS} characters.`, "system");
  const messages =
    p.system.trim() !== "" && Array.isArray(conversation)
      ? [{ role: "system", content: p.system }, ...conversation]
      : conversation;
  const body: Record<string, unknown> = { messages };
  if (p.temperature !== "") {
    const t = /^\d{1,3}(\.\d{1,6})?$/.test(p.temperature) ? Number(p.temperature) : Number.NaN;
    if (!(t >= 0 && t <= TEMPERATURE_MAX))
      throw invalid(`temperature must be a number from 0 to ${TEMPERATURE_MAX}.`, "temperature");
    body.temperature = t;
  }
  if (p.max_tokens !== "") {
    const n = /^\d{1,9}$/.test(p.max_tokens) ? Number(p.max_tokens) : 0;
    const most = context ?? 100_000_000;
    if (n < 1 || n > most)
      throw invalid(`max_tokens must be a whole number from 1 to ${most}.`, "max_tokens");
    body.max_tokens = n;
  }
  return body;
}
