import { Elysia, t } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { resolveFileRefs, uploadedImageSize } from "../files/references.ts";
import { errors, MicroString } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { estimate } from "./estimate.ts";
import { usdMicroToRubMicro } from "./fx.ts";

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
    .derive(({ request }) => ({ principal: requirePrincipal(ctx, request) }))
    .post(
      "/estimate",
      ({ principal, body }) => {
        const model = ctx.catalog.get(body.model_id);
        if (!model)
          throw new DomainError("unknown_model", `Model "${body.model_id}" is not in the catalog.`, {
            param: "model_id",
          });
        const input = body.input ?? {};
        // As at submit: an upscale of an uploaded file is priced on the file's measured size.
        const files =
          model.kind === "text" ? new Map() : resolveFileRefs(ctx.files, principal.accountId, input);
        const e = estimate(model, input, { imageSize: uploadedImageSize(files) });
        const account = ctx.accounts.getAccount(principal.accountId)!;
        const out = {
          object: "estimate" as const,
          model_id: e.model_id,
          unit: e.unit,
          units: e.units,
          resolution: e.resolution,
          price_usd_micro: e.price_usd_micro.toString(),
          currency: account.currency,
        };
        if (account.currency === "USD") return out;
        const rate = ctx.fx.get(account.currency);
        if (!rate)
          throw new DomainError(
            "unpriceable",
            `No USD->${account.currency} rate is set; the operator must set one.`,
          );
        return {
          ...out,
          price_rub_micro: usdMicroToRubMicro(e.price_usd_micro, rate.rate_micro).toString(),
          fx_rate_micro: rate.rate_micro.toString(),
        };
      },
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
        response: { 200: EstimateSchema, ...errors(400, 401) },
      },
    );
}
