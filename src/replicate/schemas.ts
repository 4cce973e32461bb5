import { t } from "elysia";
import { WEBHOOK_EVENTS } from "./predictions.ts";

/** A create's body (Replicate's "predictions.create"): `version` on POST /predictions only. */
export const PredictionBody = t.Object(
  {
    version: t.Optional(
      t.String({
        description:
          'POST /v1/predictions: "owner/name", "owner/name:<version>" or the version id alone (a model\'s `version` in its predictions).',
      }),
    ),
    input: t.Record(t.String(), t.Unknown(), {
      description: "The model input (see the model's input_schema).",
    }),
    webhook: t.Optional(t.String({ description: "A public http(s) URL: gets the prediction when it ends." })),
    webhook_events_filter: t.Optional(
      t.Array(t.Union(WEBHOOK_EVENTS.map((e) => t.Literal(e))), {
        description: "Only `completed` is sent; without it in the list no webhook is sent.",
      }),
    ),
    stream: t.Optional(t.Boolean({ description: "Accepted and ignored: no prediction streams." })),
  },
  { additionalProperties: true },
);

export const PredictionSchema = t.Object(
  {
    id: t.String({ description: "The request id (UUID): the same job as /v1/requests/{id}." }),
    model: t.String(),
    version: t.String({ description: "SHA-256 of the model id, hex." }),
    status: t.Union(["starting", "processing", "succeeded", "failed", "canceled"].map((s) => t.Literal(s))),
    input: t.Unknown(),
    output: t.Unknown({
      description: "Signed links (24 hours): one URL, or a list when the model outputs a list.",
    }),
    error: t.Union([t.String(), t.Null()]),
    logs: t.Optional(t.String()),
    metrics: t.Object({ predict_time: t.Optional(t.Number()), total_time: t.Optional(t.Number()) }),
    urls: t.Object({ get: t.String(), cancel: t.String(), stream: t.String(), web: t.String() }),
    created_at: t.Union([t.String(), t.Null()]),
    started_at: t.Union([t.String(), t.Null()]),
    completed_at: t.Union([t.String(), t.Null()]),
    data_removed: t.Boolean(),
    source: t.String(),
  },
  { title: "Prediction" },
);

export const PredictionPageSchema = t.Object(
  {
    next: t.Union([t.String(), t.Null()], { description: "The next page's URL, or null on the last page." }),
    previous: t.Null(),
    results: t.Array(PredictionSchema),
  },
  { title: "PredictionPage" },
);

/** Replicate's error body: a problem detail with gengate's code inside (src/http/doors.ts). */
export const ProblemSchema = t.Object(
  {
    title: t.String(),
    detail: t.String(),
    status: t.Integer(),
    code: t.String({ description: "gengate's error code." }),
  },
  { title: "Problem", additionalProperties: true },
);

export const problems = <S extends number>(...statuses: S[]): Record<S, typeof ProblemSchema> =>
  Object.fromEntries(statuses.map((s) => [s, ProblemSchema])) as Record<S, typeof ProblemSchema>;
