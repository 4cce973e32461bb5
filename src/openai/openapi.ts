import type { DocumentDecoration } from "elysia";

/**
 * OpenAPI descriptions of OpenAI's images and speech routes (their bodies are read and mapped by
 * hand, src/openai/media-map.ts, so they carry no TypeBox schema).
 */

const ERRORS = {
  400: {
    description:
      "validation_error (size, format, parameter), unknown_model, use_chat_completions, unknown_file",
  },
  401: { description: "unauthorized" },
  403: { description: "model_not_allowed, address_not_allowed (the key's allow-lists)" },
  402: { description: "insufficient_balance (names the billing page), key_limit_reached" },
  409: {
    description:
      "idempotency_conflict; request_not_ready when the job outlived the wait (its request_id inside)",
  },
  429: { description: "rate_limited, too_many_in_flight" },
  502: { description: "generation_failed: nothing was charged (x-should-retry: false)" },
  503: { description: "capacity_unavailable: retry after Retry-After" },
};

const IMAGES_ANSWER = {
  200: {
    description:
      "`{created, data: [{url} | {b64_json}], output_format}`; urls are gengate's signed output links (24 hours); the job's id is in the x-gengate-request-id header.",
    content: { "application/json": { schema: { type: "object" } } },
  },
};

const imageFields = {
  model: { type: "string", description: "An image model id from /v1/models." },
  prompt: { type: "string" },
  n: { type: "integer", minimum: 1, description: "num_images, for models that take it." },
  size: {
    type: "string",
    description: '"WxH" (width/height, or the nearest image_size tier of the same aspect) or "auto".',
  },
  response_format: {
    type: "string",
    enum: ["url", "b64_json"],
    description: "Absent: each item carries both the url and the b64_json (images up to 32 MiB).",
  },
  output_format: { type: "string", description: "One of the model's output formats (sandbox: png)." },
};

export const IMAGES_GENERATIONS_OPENAPI = {
  summary: "Create images (OpenAI)",
  description:
    "OpenAI's images.generate: one queue job of an image model, answered when it ends. The hold is POST /v1/estimate's price for the mapped input; a failure charges nothing. quality, style, user, background and moderation are accepted and ignored.",
  parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: { type: "object", required: ["model", "prompt"], properties: imageFields },
      },
    },
  },
  responses: { ...IMAGES_ANSWER, ...ERRORS },
} as unknown as DocumentDecoration;

export const IMAGES_EDITS_OPENAPI = {
  summary: "Edit images (OpenAI)",
  description:
    "OpenAI's images.edit: the image part(s) (`image` or `image[]`; a gengate file_id is accepted too) and an optional `mask` are stored as uploads of the account and given to an image model that takes an image input. The whole form is at most min(upload_max_bytes, 64 MiB).",
  parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
  requestBody: {
    required: true,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          required: ["model", "prompt", "image"],
          properties: {
            ...imageFields,
            image: { type: "array", items: { type: "string", format: "binary" } },
            mask: { type: "string", format: "binary" },
          },
        },
      },
    },
  },
  responses: {
    ...IMAGES_ANSWER,
    ...ERRORS,
    413: { description: "payload_too_large" },
    415: { description: "unsupported_media_type" },
  },
} as unknown as DocumentDecoration;

export const SPEECH_OPENAPI = {
  summary: "Create speech (OpenAI)",
  description:
    "OpenAI's audio.speech.create: one queue job of an audio model (input -> text, voice, response_format among the model's output formats, speed where the model has it), answered with the audio bytes and their content type when it ends.",
  parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["model", "input"],
          properties: {
            model: { type: "string", description: "An audio model id from /v1/models." },
            input: { type: "string" },
            voice: {
              oneOf: [{ type: "string" }, { type: "object", properties: { id: { type: "string" } } }],
            },
            response_format: {
              type: "string",
              description: "One of the model's output formats (sandbox: wav).",
            },
            speed: { type: "number" },
            instructions: { type: "string", description: "Accepted and ignored." },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: "The audio bytes (for example audio/wav).",
      content: { "audio/*": { schema: { type: "string", format: "binary" } } },
    },
    ...ERRORS,
  },
} as unknown as DocumentDecoration;
