import { t } from "elysia";
import { MicroString } from "../http/schemas.ts";

const Status = t.Union(
  [
    t.Literal("IN_QUEUE"),
    t.Literal("IN_PROGRESS"),
    t.Literal("COMPLETED"),
    t.Literal("FAILED"),
    t.Literal("CANCELLED"),
  ],
  { description: "IN_QUEUE -> IN_PROGRESS -> COMPLETED | FAILED; CANCELLED from IN_QUEUE only." },
);
const Urls = {
  status_url: t.String({ format: "uri" }),
  response_url: t.String({ format: "uri" }),
  cancel_url: t.String({ format: "uri" }),
};
const Time = t.Union([t.String({ format: "date-time" }), t.Null()]);

export const QueuedSchema = t.Object(
  {
    status: Status,
    request_id: t.String({ description: "UUIDv7" }),
    ...Urls,
    model_id: t.String(),
    quoted_usd_micro: MicroString("The quoted (and reserved) price in micro-USD."),
    queue_position: t.Union([t.Integer(), t.Null()], { description: "0-based, while IN_QUEUE." }),
    price_rub_micro: t.Optional(MicroString("RUB accounts: the reserved amount in micro-RUB.")),
  },
  { title: "QueuedRequest" },
);

const StatusFields = {
  status: Status,
  request_id: t.String(),
  model_id: t.String(),
  ...Urls,
  queue_position: t.Union([t.Integer(), t.Null()]),
  logs: t.Array(t.Object({ timestamp: Time, level: t.String(), message: t.String() }), {
    description: "Filled with ?logs=1; always an array.",
  }),
  created_at: Time,
  started_at: Time,
  completed_at: Time,
  error: t.Union([t.Object({ code: t.String(), message: t.String() }), t.Null()]),
};
export const StatusSchema = t.Object(StatusFields, { title: "RequestStatus" });

const Price = t.Object({
  currency: t.String(),
  unit: t.String(),
  units: t.String(),
  quoted_usd_micro: MicroString("Quoted price."),
  reserved_micro: t.Union([t.String(), t.Null()], { description: "Held, in the account currency." }),
  charged_usd_micro: t.Union([t.String(), t.Null()], { description: "null until settled; 0 when released." }),
  charged_micro: t.Union([t.String(), t.Null()]),
  fx_rate: t.Union([t.String(), t.Null()], { description: "micro-RUB per USD fixed at reservation." }),
  actual_units: t.Union([t.String(), t.Null()]),
});
const RecordFields = {
  ...StatusFields,
  kind: t.String(),
  source: t.Union([t.Literal("API"), t.Literal("STUDIO")]),
  price: Price,
  output_urls: t.Array(t.String({ format: "uri" }), { description: "Signed, reissued at every read." }),
  webhook: t.Union([t.Object({ url: t.String(), status: t.String(), attempts: t.Integer() }), t.Null()]),
  usage: t.Optional(
    t.Union([t.Object({ prompt_tokens: t.Integer(), completion_tokens: t.Integer() }), t.Null()], {
      description: "Chat calls: the token counts they were billed on.",
    }),
  ),
};
export const RecordSchema = t.Object({ ...RecordFields, input: t.Unknown() }, { title: "RequestRecord" });
export const RecordListSchema = t.Object(
  { data: t.Array(t.Object(RecordFields)), next_cursor: t.Union([t.String(), t.Null()]) },
  { title: "RequestList" },
);

/** The request id in /v1/requests/{id}/...: any string, checked by ownedJob (400 unless a UUID). */
export const IdParams = t.Object({ id: t.String({ description: "request_id (UUID)" }) });
export const ModelInput = t.Record(t.String(), t.Unknown(), {
  description: "The model input (see the model's input_schema); may carry webhook_url.",
});
export const SubmitQuery = t.Object({
  webhook_url: t.Optional(t.String({ description: "Public URL that gets one POST when the job ends." })),
  fal_webhook: t.Optional(t.String({ description: "Alias of webhook_url (fal clients)." })),
});
