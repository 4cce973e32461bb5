import type { DocumentDecoration } from "elysia";

/** A required JSON request body of this schema. */
export function jsonBody(schema: Record<string, unknown>) {
  return { required: true, content: { "application/json": { schema } } };
}

/** The answers of a text call, by the door's description of its 200 (chat completions, Responses). */
export function textCallResponses(ok: string) {
  return {
    200: {
      description: ok,
      content: {
        "application/json": { schema: { type: "object" } },
        "text/event-stream": { schema: { type: "string" } },
      },
    },
    400: { description: "bad_messages, unknown_model, validation_error" },
    401: { description: "unauthorized" },
    403: { description: "model_not_allowed, address_not_allowed (the key's allow-lists)" },
    402: { description: "insufficient_balance, key_limit_reached" },
    429: { description: "rate_limited, too_many_in_flight" },
    502: { description: "submit_failed: nothing was charged" },
    503: { description: "capacity_unavailable: retry after Retry-After" },
  };
}

/** OpenAPI description of the chat route (its body is validated by hand to answer bad_messages). */
export const CHAT_OPENAPI = {
  summary: "Create a chat completion",
  description:
    "OpenAI's chat format. Reserves a conservative prompt estimate plus max_tokens or max_completion_tokens (4096 when missing, also applied to the reply), then charges the upstream's usage, never above the reservation. stream=true answers text/event-stream chunks ending with data: [DONE]; stream_options.include_usage adds the usage chunk.",
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["model", "messages"],
          properties: {
            model: { type: "string", description: "A text model id from /v1/models." },
            messages: {
              type: "array",
              minItems: 1,
              items: {
                type: "object",
                required: ["role"],
                properties: {
                  role: { type: "string", enum: ["system", "developer", "user", "assistant", "tool"] },
                  content: {
                    oneOf: [
                      { type: "string" },
                      {
                        type: "array",
                        items: {
                          type: "object",
                          properties: { type: { const: "text" }, text: { type: "string" } },
                        },
                      },
                      { type: "null" },
                    ],
                  },
                },
              },
            },
            max_tokens: {
              type: "integer",
              minimum: 1,
              description:
                "The completion limit (OpenAI's older name); max_completion_tokens wins when both are sent.",
            },
            max_completion_tokens: {
              type: "integer",
              minimum: 1,
              description:
                "The completion limit, reserved and applied like max_tokens; sent upstream under the name the model takes.",
            },
            stream: { type: "boolean" },
            stream_options: { type: "object", properties: { include_usage: { type: "boolean" } } },
            temperature: { type: "number" },
            top_p: { type: "number" },
            stop: { oneOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          },
        },
      },
    },
  },
  responses: textCallResponses(
    "A chat.completion object, or text/event-stream chat.completion.chunk events when stream is true.",
  ),
} as unknown as DocumentDecoration;
