import { type ChatRequest, MAX_MESSAGES, parseChatBody } from "../chat/validate.ts";
import { DomainError } from "../lib/errors.ts";
import type { ChatMessage } from "../providers/chat.ts";

/**
 * Anthropic's Messages request (docs.anthropic.com "Messages";
 * @anthropic-ai/sdk/src/resources/messages/messages.ts, MessageCreateParamsBase) made the chat
 * request every text door runs (src/chat/validate.ts): `system` becomes a first system message,
 * text blocks become text parts, `max_tokens` the completion limit, `stop_sequences` OpenAI's
 * `stop`. The translated body goes through the chat door's own parser, so the sandbox controls,
 * the passthrough of unknown fields and the number checks are the chat door's.
 */

/** Fields of Anthropic's API that ask for what a gengate text model cannot do: refused, named. */
const REFUSED = ["tools", "tool_choice", "thinking", "mcp_servers", "container"] as const;
/** Fields that change nothing here: tracking (`metadata`) and Anthropic's own routing and caching. */
const IGNORED = ["metadata", "service_tier", "cache_control", "inference_geo", "context_management"];
/** Anthropic's own limit on stop sequences is larger; OpenAI-compatible upstreams take 4. */
const MAX_STOP = 4;
const ACCEPTED_BLOCKS = 'text blocks only ({"type": "text", "text": "..."})';

const bad = (message: string, param: string) => new DomainError("bad_messages", message, { param });
const invalid = (message: string, param: string) => new DomainError("validation_error", message, { param });

/** A Messages body (POST /v1/messages); `max_tokens` is required, as Anthropic requires it. */
export function parseMessagesBody(body: unknown): ChatRequest {
  return translate(body, true);
}

/** A count_tokens body: the same without `max_tokens` (nothing is generated). */
export function parseCountTokensBody(body: unknown): ChatRequest {
  return translate(body, false);
}

function translate(body: unknown, needsMaxTokens: boolean): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("The body must be a JSON object.", "body");
  const { model, messages, system, max_tokens, stop_sequences, stream, temperature, top_p, ...rest } =
    body as Record<string, unknown>;
  for (const k of REFUSED) {
    if (asksFor(rest[k]))
      throw invalid(
        `${k} is not supported: gengate's text models answer text only (model, messages, system, max_tokens, temperature, top_p, stop_sequences, stream).`,
        k,
      );
  }
  for (const k of [...REFUSED, ...IGNORED]) delete rest[k];
  if (needsMaxTokens && (max_tokens === undefined || max_tokens === null))
    throw invalid(
      "max_tokens is required: the most tokens the reply may have (it is also reserved).",
      "max_tokens",
    );
  if (temperature !== undefined && (typeof temperature !== "number" || temperature < 0 || temperature > 1))
    throw invalid("temperature must be a number in [0, 1].", "temperature");
  if (!Array.isArray(messages))
    throw bad("messages must be an array of {role, content} objects.", "messages");
  if (messages.length === 0) throw bad("messages must not be empty.", "messages");
  if (messages.length > MAX_MESSAGES) throw bad(`At most ${MAX_MESSAGES} messages per call.`, "messages");
  const chat: ChatMessage[] = [];
  if (system !== undefined && system !== null)
    chat.push({ role: "system", content: textContent(system, "system") });
  messages.forEach((m, i) => {
    chat.push(message(m, `messages[${i}]`));
  });
  if (stop_sequences !== undefined && stop_sequences !== null) {
    if (
      !Array.isArray(stop_sequences) ||
      stop_sequences.length > MAX_STOP ||
      !stop_sequences.every((s) => typeof s === "string" && s.length > 0)
    )
      throw invalid(`stop_sequences must be up to ${MAX_STOP} non-empty strings.`, "stop_sequences");
  }
  return parseChatBody({
    ...rest,
    model,
    messages: chat,
    ...(max_tokens !== undefined ? { max_tokens } : {}),
    ...(stream !== undefined ? { stream } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(top_p !== undefined ? { top_p } : {}),
    ...(Array.isArray(stop_sequences) && stop_sequences.length > 0 ? { stop: stop_sequences } : {}),
  });
}

/**
 * Whether a refused field asks for something: absent, null, an empty list of tools, `{"type":
 * "disabled"}` thinking or `{"type": "none"}` tool choice ask for nothing and are dropped.
 */
function asksFor(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  const type = typeof v === "object" ? (v as { type?: unknown }).type : undefined;
  return type !== "disabled" && type !== "none";
}

function message(m: unknown, path: string): ChatMessage {
  if (typeof m !== "object" || m === null || Array.isArray(m))
    throw bad(`${path} must be an object with role and content.`, path);
  const { role, content } = m as Record<string, unknown>;
  if (role !== "user" && role !== "assistant")
    throw bad(
      `${path}.role must be "user" or "assistant" (the system prompt goes in system).`,
      `${path}.role`,
    );
  return { role, content: textContent(content, `${path}.content`) };
}

/** A string, or text blocks (each may carry cache_control or citations, which change nothing here). */
function textContent(c: unknown, path: string): ChatMessage["content"] {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) throw bad(`${path} must be a string or an array of ${ACCEPTED_BLOCKS}.`, path);
  if (c.length === 0) throw bad(`${path} must not be empty.`, path);
  return c.map((b, j) => {
    const block = b as { type?: unknown; text?: unknown } | null;
    if (
      typeof block !== "object" ||
      block === null ||
      block.type !== "text" ||
      typeof block.text !== "string"
    ) {
      const kind =
        typeof block?.type === "string" ? `a "${block.type.slice(0, 40)}" block` : "not a text block";
      throw bad(`${path}[${j}] is ${kind}: gengate's text models take ${ACCEPTED_BLOCKS}.`, `${path}[${j}]`);
    }
    return { type: "text" as const, text: block.text };
  });
}
