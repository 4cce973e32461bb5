import { type ChatRequest, MAX_MESSAGES, parseChatBody } from "../chat/validate.ts";
import { DomainError } from "../lib/errors.ts";
import type { ChatMessage } from "../providers/chat.ts";

/** What the response object echoes of the request (OpenAI's Response carries these fields). */
export interface ResponsesEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  temperature: number | null;
  top_p: number | null;
  store: boolean;
  metadata: Record<string, string>;
  user: string | null;
}

export interface ResponsesRequest {
  /** The call as a chat call: the same validation, quote, upstream call and settlement. */
  chat: ChatRequest;
  echo: ResponsesEcho;
}

/**
 * Fields of the Responses API accepted and ignored: hints with no effect on a text model answered
 * through a chat upstream (caching, tiers, logprobs, reasoning settings, output includes) and
 * `store`/`metadata`, echoed but not stored.
 */
const IGNORED = [
  "store",
  "metadata",
  "include",
  "truncation",
  "parallel_tool_calls",
  "service_tier",
  "reasoning",
  "top_logprobs",
  "max_tool_calls",
  "tool_choice",
  "prompt_cache_key",
  "prompt_cache_retention",
  "prompt_cache_options",
  "safety_identifier",
  "stream_options",
  "context_management",
  "background",
] as const;

/** Fields that need state gengate does not keep: refused rather than silently answered without it. */
const STATEFUL: Record<string, string> = {
  previous_response_id:
    "previous_response_id is not supported: gengate does not store conversations. Send the earlier turns in input.",
  conversation:
    "conversation is not supported: gengate does not store conversations. Send the earlier turns in input.",
  prompt: "prompt (a stored prompt template) is not supported: send the instructions and input themselves.",
};

const ROLES = new Set(["user", "assistant", "system", "developer"]);
const TEXT_PARTS = new Set(["input_text", "output_text"]);
const ACCEPTED_PARTS =
  'content must be a string or an array of {"type": "input_text"|"output_text", "text": "..."} parts';

const bad = (message: string, param: string) => new DomainError("bad_messages", message, { param });
const invalid = (message: string, param: string) => new DomainError("validation_error", message, { param });

/**
 * Validates an OpenAI Responses body and translates it to the chat call it is: `instructions` a
 * system message first, `input` the messages, `max_output_tokens` the completion limit (absent:
 * the same 4096 rule as chat), `text.format` the chat response_format. What a text model cannot
 * take (images, files, audio, tools, tool outputs) is 400 naming what is accepted; every other
 * field goes through chat's own validation (temperature, top_p, sandbox controls) and, unknown,
 * is passed to the upstream as the chat door passes its unknown fields.
 */
export function parseResponsesBody(body: unknown): ResponsesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("The body must be a JSON object.", "body");
  const { model, input, instructions, max_output_tokens, stream, tools, text, user, ...rest } =
    body as Record<string, unknown>;
  for (const [field, message] of Object.entries(STATEFUL))
    if (rest[field] !== undefined && rest[field] !== null) throw invalid(message, field);
  if (rest.background === true)
    throw invalid("background is not supported: stream the response or wait for it.", "background");
  if (Array.isArray(tools) && tools.length > 0)
    throw invalid("tools are not supported: the text models here answer text only.", "tools");
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw invalid("tools must be an array.", "tools");
  if (instructions !== undefined && instructions !== null && typeof instructions !== "string")
    throw invalid("instructions must be a string.", "instructions");
  if (user !== undefined && user !== null && typeof user !== "string")
    throw invalid("user must be a string.", "user");
  const { store, metadata } = rest;
  if (store !== undefined && store !== null && typeof store !== "boolean")
    throw invalid("store must be true or false.", "store");
  if (metadata !== undefined && metadata !== null && !isStringMap(metadata))
    throw invalid("metadata must be an object of string values.", "metadata");
  if (max_output_tokens !== undefined && max_output_tokens !== null) {
    if (
      typeof max_output_tokens !== "number" ||
      !Number.isSafeInteger(max_output_tokens) ||
      max_output_tokens < 1
    )
      throw invalid("max_output_tokens must be an integer of at least 1.", "max_output_tokens");
  }
  const passthrough: Record<string, unknown> = { ...rest };
  // Chat's own names for what the Responses API names otherwise: never taken from the body.
  for (const k of [...IGNORED, "messages", "max_tokens", "max_completion_tokens"]) delete passthrough[k];
  const responseFormat = readTextFormat(text);
  if (responseFormat) passthrough.response_format = responseFormat;
  if (typeof user === "string") passthrough.user = user;

  const messages: ChatMessage[] = [];
  if (typeof instructions === "string" && instructions.length > 0)
    messages.push({ role: "system", content: instructions });
  messages.push(...readInput(input));

  const chat = parseChatBody({
    ...passthrough,
    model,
    messages,
    ...(typeof max_output_tokens === "number" ? { max_tokens: max_output_tokens } : {}),
    ...(stream !== undefined ? { stream } : {}),
  });
  chat.paramNames = { input: "input", output: "max_output_tokens" };
  return {
    chat,
    echo: {
      instructions: typeof instructions === "string" ? instructions : null,
      max_output_tokens: typeof max_output_tokens === "number" ? max_output_tokens : null,
      temperature: typeof rest.temperature === "number" ? rest.temperature : null,
      top_p: typeof rest.top_p === "number" ? rest.top_p : null,
      store: store === true,
      metadata: isStringMap(metadata) ? metadata : {},
      user: typeof user === "string" ? user : null,
    },
  };
}

function isStringMap(v: unknown): v is Record<string, string> {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === "string")
  );
}

/** `input`: a string (one user message) or items: messages whose content is text. */
function readInput(input: unknown): ChatMessage[] {
  if (typeof input === "string") {
    if (input.length === 0) throw bad("input must not be empty.", "input");
    return [{ role: "user", content: input }];
  }
  if (!Array.isArray(input))
    throw bad("input must be a string or an array of message items ({role, content}).", "input");
  if (input.length === 0) throw bad("input must not be empty.", "input");
  if (input.length > MAX_MESSAGES) throw bad(`At most ${MAX_MESSAGES} input items per call.`, "input");
  return input.map((item, i) => readItem(item, `input[${i}]`));
}

function readItem(item: unknown, path: string): ChatMessage {
  if (typeof item !== "object" || item === null || Array.isArray(item))
    throw bad(`${path} must be a message item {role, content}.`, path);
  const { type, role, content } = item as Record<string, unknown>;
  if (type !== undefined && type !== "message") {
    throw bad(
      `${path} is a ${JSON.stringify(type)} item: only message items are accepted (this model takes text, no tools or references).`,
      `${path}.type`,
    );
  }
  if (typeof role !== "string" || !ROLES.has(role))
    throw bad(`${path}.role must be one of user, assistant, system, developer.`, `${path}.role`);
  if (typeof content === "string") return { role: role as ChatMessage["role"], content };
  if (!Array.isArray(content)) throw bad(`${path}.${ACCEPTED_PARTS}.`, `${path}.content`);
  const parts = content.map((p, j) => {
    const part = p as { type?: unknown; text?: unknown };
    if (
      !part ||
      typeof part !== "object" ||
      !TEXT_PARTS.has(part.type as string) ||
      typeof part.text !== "string"
    ) {
      const what =
        part && typeof part === "object" && typeof part.type === "string" ? ` (got ${part.type})` : "";
      throw bad(
        `${path}.content[${j}]: this model takes text only${what}; ${ACCEPTED_PARTS}.`,
        `${path}.content[${j}]`,
      );
    }
    return { type: "text" as const, text: part.text };
  });
  return { role: role as ChatMessage["role"], content: parts };
}

/** `text.format`: plain text, or JSON (object or schema) asked of the upstream as chat's response_format. */
function readTextFormat(text: unknown): Record<string, unknown> | null {
  if (text === undefined || text === null) return null;
  if (typeof text !== "object" || Array.isArray(text)) throw invalid("text must be an object.", "text");
  const format = (text as { format?: unknown }).format;
  if (format === undefined || format === null) return null;
  const f = format as Record<string, unknown>;
  if (typeof f !== "object" || Array.isArray(f))
    throw invalid("text.format must be an object.", "text.format");
  switch (f.type) {
    case "text":
      return null;
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      const { type: _t, ...schema } = f;
      return { type: "json_schema", json_schema: schema };
    }
    default:
      throw invalid('text.format.type must be "text", "json_object" or "json_schema".', "text.format.type");
  }
}
