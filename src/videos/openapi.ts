import type { DocumentDecoration } from "elysia";

/** The create body: OpenAI's fields, as multipart (what both SDKs send) or JSON. */
const createFields = {
  type: "object",
  required: ["model"],
  properties: {
    model: { type: "string", description: "A video or avatar model id from /v1/models." },
    prompt: { type: "string", description: "What to generate (an avatar's text to speak)." },
    seconds: { type: "string", description: 'Duration: "4", "8", or any the model allows ("5s" too).' },
    size: { type: "string", description: '"WxH": one the model can make (a 400 lists them).' },
    input_reference: {
      description: "An image file, a file id, or {file_id} / {image_url}: the model's image_url.",
    },
  },
  additionalProperties: { description: "Passed to the model's input as it is." },
};

const CREATE_REQUEST_BODY = {
  required: true,
  content: {
    "multipart/form-data": { schema: createFields },
    "application/json": { schema: createFields },
  },
} as unknown as NonNullable<DocumentDecoration["requestBody"]>;

const BINARY = { schema: { type: "string" as const, format: "binary" } };

/** The OpenAPI details of the OpenAI videos routes (src/videos/http.ts). */
export const VIDEO_DOCS = {
  create: {
    summary: "Create a video (OpenAI)",
    description:
      "OpenAI's videos.create: opens one queue job of a video or avatar model (the estimate is held) and answers the video object at once; its id is the request id. Idempotency-Key replays the first answer.",
    requestBody: CREATE_REQUEST_BODY,
  },
  list: {
    summary: "List videos (OpenAI)",
    description: "The account's video and avatar jobs as OpenAI's cursor list.",
  },
  retrieve: {
    summary: "Retrieve a video (OpenAI)",
    description: "The video object; poll it until completed or failed.",
  },
  content: {
    summary: "Download a video (OpenAI)",
    description:
      "The stored video (Range answers 206 and does not count against the download cap). 409 request_not_ready before it completes.",
    responses: { 200: { description: "The video", content: { "application/octet-stream": BINARY } } },
  },
  remove: {
    summary: "Delete a video (OpenAI)",
    description:
      "Queued: cancelled, its hold released. Completed: its stored files deleted. In progress: 409 not_cancellable.",
  },
} satisfies Record<string, DocumentDecoration>;
