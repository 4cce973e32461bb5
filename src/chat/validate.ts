import { DomainError } from "../lib/errors.ts";
import type { ChatMessage } from "../providers/chat.ts";

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens: number | undefined;
  /**
   * The name the client gave the completion limit: OpenAI's chat API takes `max_tokens` (deprecated)
   * or `max_completion_tokens`; "max_tokens" when it sent neither. Errors name it, and the upstream
   * call uses it where the model accepts it (src/providers/openai/chat.ts).
   */
  maxTokensParam: TokenLimitParam;
  stream: boolean;
  includeUsage: boolean;
  /**
   * The names errors give the prompt and the completion limit, for a door whose fields are named
   * otherwise (the Responses door: input, max_output_tokens); messages and maxTokensParam when absent.
   */
  paramNames?: { input: string; output: string };
  /** Every other field, passed through to the upstream unchanged. */
  passthrough: Record<string, unknown>;
  /** Sandbox test controls (sandbox models only). */
  sandbox: { delay_ms?: number; fail?: boolean } | null;
}

export type TokenLimitParam = "max_tokens" | "max_completion_tokens";

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
export const MAX_MESSAGES = 2048;
const MAX_PARTS = 256;

const bad = (message: string, param: string) => new DomainError("bad_messages", message, { param });
const invalid = (message: string, param: string) => new DomainError("validation_error", message, { param });

/**
 * Validates an OpenAI chat body. Problems with `messages` are 400 bad_messages (the spec's code);
 * other fields are 400 validation_error. Text-only models take string content or text parts.
 */
export function parseChatBody(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("The body must be a JSON object.", "body");
  const b = body as Record<string, unknown>;
  const { model, messages, max_tokens, max_completion_tokens, stream, stream_options, sandbox, ...rest } = b;
  if (typeof model !== "string" || model.length === 0 || model.length > 256) {
    throw new DomainError("unknown_model", "model must be the id of a text model from GET /v1/models.", {
      param: "model",
    });
  }
  if (!Array.isArray(messages))
    throw bad("messages must be an array of {role, content} objects.", "messages");
  if (messages.length === 0) throw bad("messages must not be empty.", "messages");
  if (messages.length > MAX_MESSAGES) throw bad(`At most ${MAX_MESSAGES} messages per call.`, "messages");
  const parsed: ChatMessage[] = messages.map((m, i) => parseMessage(m, `messages[${i}]`));

  // Both may be sent (an SDK filling both): the current name wins, as OpenAI honours it.
  const maxTokensParam: TokenLimitParam =
    max_completion_tokens !== undefined && max_completion_tokens !== null
      ? "max_completion_tokens"
      : "max_tokens";
  const maxTokens = readMaxTokens(
    maxTokensParam === "max_completion_tokens" ? max_completion_tokens : max_tokens,
    maxTokensParam,
  );
  if (stream !== undefined && typeof stream !== "boolean")
    throw invalid("stream must be true or false.", "stream");
  let includeUsage = false;
  if (stream_options !== undefined) {
    if (typeof stream_options !== "object" || stream_options === null || Array.isArray(stream_options)) {
      throw invalid("stream_options must be an object.", "stream_options");
    }
    const iu = (stream_options as { include_usage?: unknown }).include_usage;
    if (iu !== undefined && typeof iu !== "boolean")
      throw invalid("stream_options.include_usage must be a boolean.", "stream_options.include_usage");
    includeUsage = iu === true;
  }
  if (rest.n !== undefined && rest.n !== 1) throw invalid("Only n = 1 is supported.", "n");
  for (const [k, lo, hi] of [
    ["temperature", 0, 2],
    ["top_p", 0, 1],
    ["presence_penalty", -2, 2],
    ["frequency_penalty", -2, 2],
  ] as const) {
    const v = rest[k];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi))
      throw invalid(`${k} must be a number in [${lo}, ${hi}].`, k);
  }
  if (
    rest.stop !== undefined &&
    typeof rest.stop !== "string" &&
    !(Array.isArray(rest.stop) && rest.stop.length <= 4 && rest.stop.every((s) => typeof s === "string"))
  ) {
    throw invalid("stop must be a string or up to 4 strings.", "stop");
  }
  let sb: ChatRequest["sandbox"] = null;
  if (sandbox !== undefined) {
    if (typeof sandbox !== "object" || sandbox === null)
      throw invalid("sandbox must be an object.", "sandbox");
    const { delay_ms, fail, ...other } = sandbox as Record<string, unknown>;
    if (Object.keys(other).length)
      throw invalid(`sandbox.${Object.keys(other)[0]} is not a sandbox control.`, "sandbox");
    if (
      delay_ms !== undefined &&
      (!Number.isInteger(delay_ms) || (delay_ms as number) < 0 || (delay_ms as number) > 10_000)
    ) {
      throw invalid("sandbox.delay_ms must be an integer in 0..10000 (per token).", "sandbox.delay_ms");
    }
    if (fail !== undefined && typeof fail !== "boolean")
      throw invalid("sandbox.fail must be a boolean.", "sandbox.fail");
    sb = { delay_ms: delay_ms as number | undefined, fail: fail as boolean | undefined };
  }
  return {
    model,
    messages: parsed,
    maxTokens,
    maxTokensParam,
    stream: stream === true,
    includeUsage,
    passthrough: rest,
    sandbox: sb,
  };
}

function readMaxTokens(v: unknown, param: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1)
    throw invalid(`${param} must be an integer of at least 1.`, param);
  return v;
}

function parseMessage(m: unknown, path: string): ChatMessage {
  if (typeof m !== "object" || m === null || Array.isArray(m))
    throw bad(`${path} must be an object with role and content.`, path);
  const { role, content, name, tool_call_id, tool_calls } = m as Record<string, unknown>;
  if (typeof role !== "string" || !ROLES.has(role)) {
    throw bad(`${path}.role must be one of system, developer, user, assistant, tool.`, `${path}.role`);
  }
  if (name !== undefined && (typeof name !== "string" || name.length > 64))
    throw bad(`${path}.name must be a short string.`, `${path}.name`);
  let c: ChatMessage["content"];
  if (typeof content === "string") c = content;
  else if (content === null || content === undefined) {
    if (role !== "assistant") throw bad(`${path}.content is required.`, `${path}.content`);
    c = null;
  } else if (Array.isArray(content)) {
    if (content.length > MAX_PARTS)
      throw bad(`${path}.content has more than ${MAX_PARTS} parts.`, `${path}.content`);
    c = content.map((p, j) => {
      const part = p as { type?: unknown; text?: unknown };
      if (!part || typeof part !== "object" || part.type !== "text" || typeof part.text !== "string") {
        throw bad(
          `${path}.content[${j}] must be {"type": "text", "text": "..."}: this model takes text only.`,
          `${path}.content[${j}]`,
        );
      }
      return { type: "text" as const, text: part.text };
    });
  } else {
    throw bad(`${path}.content must be a string or an array of text parts.`, `${path}.content`);
  }
  return {
    role: role as ChatMessage["role"],
    content: c,
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof tool_call_id === "string" ? { tool_call_id } : {}),
    ...(Array.isArray(tool_calls) ? { tool_calls } : {}),
  };
}
