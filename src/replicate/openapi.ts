import type { DocumentDecoration } from "elysia";

/** The Replicate door's OpenAPI descriptions (docs/clients.md "Replicate"). */
const WAIT = {
  name: "Prefer",
  in: "header",
  required: false,
  schema: { type: "string" as const, examples: ["wait", "wait=5"] },
  description: "wait[=n]: answer when the prediction ends or after n seconds (1 to 60, default 60).",
};
const IDEMPOTENCY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string" as const },
};

export const OPENAPI = {
  stream: {
    summary: "Stream a prediction (Replicate)",
    description:
      "The signed urls.stream of a prediction, no key: server-sent events, a keep-alive comment every 15 s, then one `output` event per output and `done`; `error` if it failed, `done` with reason canceled if canceled.",
    security: [],
    responses: {
      200: {
        description: "text/event-stream",
        content: { "text/event-stream": { schema: { type: "string" } } },
      },
    },
  },
  createOfModel: {
    summary: "Create a prediction of a model (Replicate)",
    description:
      "Replicate's create: opens one queue job of the catalog model owner/name with `input` (held and priced as POST /v1/queue). Prefer: wait[=n] holds the answer until the job ends or n seconds. 201 with the prediction.",
    parameters: [WAIT, IDEMPOTENCY],
  },
  create: {
    summary: "Create a prediction (Replicate)",
    description: "As POST /v1/models/{owner}/{name}/predictions, the model named by `version`.",
    parameters: [WAIT, IDEMPOTENCY],
  },
  list: {
    summary: "List predictions (Replicate)",
    description:
      "The account's jobs, newest first, as predictions without logs; `next` is the next page's URL.",
  },
  get: {
    summary: "Get a prediction (Replicate)",
    description: "The job as a prediction, with fresh signed output links.",
  },
  cancel: {
    summary: "Cancel a prediction (Replicate)",
    description:
      "A starting (queued) prediction is canceled and its hold released; an ended one is answered as it is; a processing one is 409 not_cancellable.",
  },
  secret: {
    summary: "Get the webhook signing secret (Replicate)",
    description:
      "The account's whsec_ secret as Replicate's client reads it (`key`); the same as GET /v1/account/webhook-secret.",
  },
} satisfies Record<string, DocumentDecoration>;
