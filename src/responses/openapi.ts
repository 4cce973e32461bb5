import type { DocumentDecoration } from "elysia";
import { jsonBody, textCallResponses } from "../chat/openapi.ts";

const TEXT_PARTS = {
  type: "array",
  items: {
    type: "object",
    required: ["type", "text"],
    properties: { type: { enum: ["input_text", "output_text"] }, text: { type: "string" } },
  },
};

/** OpenAPI description of POST /v1/responses (its body is validated by hand, as chat's is). */
export const RESPONSES_OPENAPI = {
  summary: "Create a response (OpenAI Responses API)",
  description:
    "OpenAI's Responses format over the catalog's text models, billed exactly like chat: the same reservation (max_output_tokens, 4096 when missing), charged from usage, never above the reservation; nothing charged on failure. input is a string or message items whose content is text (input_text / output_text parts); images, files, tools and stored state (previous_response_id, conversation) are refused with 400. stream=true answers Responses events (response.created ... response.output_text.delta ... response.completed with usage). The response id is resp_<request id>; the call shows in GET /v1/requests.",
  requestBody: jsonBody({
    type: "object",
    required: ["model", "input"],
    properties: {
      model: { type: "string", description: "A text model id from /v1/models." },
      input: {
        oneOf: [
          { type: "string" },
          {
            type: "array",
            minItems: 1,
            items: {
              type: "object",
              required: ["role", "content"],
              properties: {
                type: { const: "message" },
                role: { type: "string", enum: ["user", "assistant", "system", "developer"] },
                content: { oneOf: [{ type: "string" }, TEXT_PARTS] },
              },
            },
          },
        ],
      },
      instructions: { type: "string", description: "Sent first, as a system message." },
      max_output_tokens: {
        type: "integer",
        minimum: 1,
        description:
          "The completion limit, reserved and applied; 4096 when missing (lowered to the context left).",
      },
      stream: { type: "boolean" },
      temperature: { type: "number" },
      top_p: { type: "number" },
      store: { type: "boolean", description: "Accepted; gengate stores no conversation." },
      metadata: { type: "object", additionalProperties: { type: "string" } },
      user: { type: "string" },
      text: {
        type: "object",
        properties: {
          format: {
            type: "object",
            properties: { type: { enum: ["text", "json_object", "json_schema"] } },
          },
        },
      },
    },
  }),
  responses: textCallResponses(
    'A response object (status "completed", or "incomplete" with incomplete_details.reason "max_output_tokens"), or text/event-stream Responses events when stream is true.',
  ),
} as unknown as DocumentDecoration;
