import { t } from "elysia";
import { MicroString } from "../http/schemas.ts";

export const ModelSchema = t.Object(
  {
    id: t.String({ description: "Model id, used exactly as listed in paths (contains slashes)." }),
    object: t.Literal("model"),
    created: t.Integer({
      description: "Unix seconds (OpenAI's model object). A fixed epoch, the same for every model.",
    }),
    owned_by: t.String({ description: 'The owner segment of the id ("sandbox" for sandbox/chat).' }),
    kind: t.Union([
      t.Literal("video"),
      t.Literal("image"),
      t.Literal("avatar"),
      t.Literal("upscale"),
      t.Literal("audio"),
      t.Literal("text"),
    ]),
    unit: t.Union([t.Literal("second"), t.Literal("image"), t.Literal("megapixel"), t.Literal("1M_tokens")]),
    price_usd_micro: t.Optional(
      MicroString("Price per unit in micro-USD (absent for text and tiered models)."),
    ),
    input_price_usd_micro: t.Optional(MicroString("Text: micro-USD per 1M input tokens.")),
    output_price_usd_micro: t.Optional(MicroString("Text: micro-USD per 1M output tokens.")),
    max: t.Optional(
      t.Integer({ description: "Largest duration (s), image count or megapixels per request." }),
    ),
    context: t.Optional(t.Integer({ description: "Text: context size in tokens." })),
    resolutions: t.Optional(t.Array(t.String(), { description: "Allowed resolutions of tiered models." })),
    resolution_prices_usd_micro: t.Optional(
      t.Record(t.String(), MicroString("Price per unit at this resolution, micro-USD.")),
    ),
    default_units: t.Optional(
      t.Integer({ description: "Units assumed when duration / num_images is omitted." }),
    ),
    omitted_units: t.Optional(t.Integer({ description: "Same as default_units (the spec's name)." })),
    description: t.String(),
    input_schema: t.Record(t.String(), t.Unknown(), { description: "JSON Schema of the model input." }),
  },
  { title: "Model" },
);

export const ModelListSchema = t.Object(
  { object: t.Literal("list"), data: t.Array(ModelSchema) },
  { title: "ModelList" },
);
