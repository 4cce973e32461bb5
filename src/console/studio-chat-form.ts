/**
 * The studio chat's form fields (studio-chat-pages.ts): `messages`, the conversation so far as a
 * JSON array, `message`, the one being typed, and `conversation`, the ids of the earlier replies.
 */
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { type Form, field } from "./kit.ts";

/** At most this much JSON is read from `messages` (the API's own limits apply after). */
const MAX_MESSAGES_CHARS = 256 * 1024;
/** At most this many earlier replies count in a conversation's total. */
const MAX_CONVERSATION = 500;

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
export function conversationOfForm(form: Form): unknown | null {
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
