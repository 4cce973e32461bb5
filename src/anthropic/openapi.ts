import type { DocumentDecoration } from "elysia";

/** OpenAPI descriptions of Anthropic's Messages routes (bodies validated by hand, as chat's are). */
const TEXT_BLOCKS = {
  type: "array",
  items: {
    type: "object",
    required: ["type", "text"],
    properties: { type: { const: "text" }, text: { type: "string" } },
  },
};
const MESSAGE_FIELDS = {
  model: { type: "string", description: "A text model id from /v1/models." },
  messages: {
    type: "array",
    minItems: 1,
    items: {
      type: "object",
      required: ["role", "content"],
      properties: {
        role: { type: "string", enum: ["user", "assistant"] },
        content: { oneOf: [{ type: "string" }, TEXT_BLOCKS] },
      },
    },
  },
  system: { oneOf: [{ type: "string" }, TEXT_BLOCKS], description: "The system prompt." },
};
const ERRORS = {
  400: { description: "bad_messages (image, document or tool blocks), unknown_model, validation_error" },
  401: { description: "unauthorized" },
  403: { description: "model_not_allowed, address_not_allowed (the key's allow-lists)" },
  402: { description: "insufficient_balance, key_limit_reached (the message names the billing page)" },
  429: { description: "rate_limited, too_many_in_flight" },
};

export const MESSAGES_OPENAPI = {
  summary: "Create a message (Anthropic's Messages API)",
  description:
    "Anthropic's Messages format for its SDKs (key in x-api-key; anthropic-version ignored), run as a chat completion of a catalog text model: reserves the prompt's tokens plus max_tokens, charges the upstream's usage, never above the reservation. stream=true answers Anthropic's events (message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop; error on a failure, nothing charged). Errors are in Anthropic's shape ({type: error, error: {type, message, code}}), with x-should-retry: false on 4xx other than 408 and 429.",
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["model", "messages", "max_tokens"],
          properties: {
            ...MESSAGE_FIELDS,
            max_tokens: { type: "integer", minimum: 1, description: "Required; reserved and applied." },
            stream: { type: "boolean" },
            temperature: { type: "number", minimum: 0, maximum: 1 },
            top_p: { type: "number" },
            stop_sequences: { type: "array", maxItems: 4, items: { type: "string" } },
            metadata: { type: "object", description: "Ignored." },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: "A message object (id msg_<request id>), or text/event-stream events when stream is true.",
      content: {
        "application/json": { schema: { type: "object" } },
        "text/event-stream": { schema: { type: "string" } },
      },
    },
    ...ERRORS,
    409: { description: "idempotency_conflict (not retried: x-should-retry false)" },
    502: { description: "submit_failed: nothing was charged" },
    503: { description: "capacity_unavailable: retry after Retry-After" },
  },
} as unknown as DocumentDecoration;

export const COUNT_TOKENS_OPENAPI = {
  summary: "Count a message's input tokens (Anthropic's count_tokens)",
  description:
    "The prompt's tokens as POST /v1/messages would reserve them: exact for the sandbox, a deliberately high estimate for an upstream model. Free: no job, no hold.",
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: { type: "object", required: ["model", "messages"], properties: MESSAGE_FIELDS },
      },
    },
  },
  responses: {
    200: {
      description: "{input_tokens}",
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["input_tokens"],
            properties: { input_tokens: { type: "integer" } },
          },
        },
      },
    },
    ...ERRORS,
  },
} as unknown as DocumentDecoration;
