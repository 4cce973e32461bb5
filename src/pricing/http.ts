import { Elysia, t } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { errors, MicroString } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { accountEstimate } from "./account-estimate.ts";

const EstimateSchema = t.Object(
  {
    object: t.Literal("estimate"),
    model_id: t.String(),
    unit: t.String(),
    units: t.String({ description: "Exact decimal count of billed units." }),
    resolution: t.Union([t.String(), t.Null()]),
    price_usd_micro: MicroString("The exact price in micro-USD; what a submit reserves."),
    currency: t.Union([t.Literal("USD"), t.Literal("RUB")]),
    price_rub_micro: t.Optional(MicroString("RUB accounts: the price in micro-RUB at the current rate.")),
    fx_rate_micro: t.Optional(MicroString("RUB accounts: micro-RUB per 1 USD used.")),
  },
  { title: "Estimate" },
);

/** POST /v1/estimate: the exact price of an input, computed by the same engine as a submit. */
export function estimateRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Pricing"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post(
      "/estimate",
      async ({ principal, body }) =>
        await accountEstimate(ctx, principal.accountId, body.model_id, body.input ?? {}, principal),
      {
        body: t.Object(
          {
            model_id: t.String({ minLength: 1, maxLength: 256 }),
            input: t.Optional(
              t.Record(t.String(), t.Unknown(), {
                description: "The model input; text: {input_tokens, output_tokens}.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Estimate a price",
          description:
            "Runs nothing. Text models take input {input_tokens, output_tokens}. RUB accounts also get price_rub_micro.",
        },
        response: { 200: EstimateSchema, ...errors(400, 401, 403) },
      },
    );
}
