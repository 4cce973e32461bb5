import { checkModelAllowed, type ModelAccess } from "../catalog/access.ts";
import { normalizeInputForms } from "../catalog/input-forms.ts";
import { resolveFileRefs, uploadedImageSize } from "../files/references.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { estimate } from "./estimate.ts";
import { usdMicroToRubMicro } from "./fx.ts";

/** What POST /v1/estimate answers (and the studio's Estimate shows): amounts as decimal strings. */
export interface AccountEstimate {
  object: "estimate";
  model_id: string;
  unit: string;
  units: string;
  resolution: string | null;
  price_usd_micro: string;
  currency: "USD" | "RUB";
  price_rub_micro?: string;
  fx_rate_micro?: string;
}

/**
 * The exact price of an input for an account, computed by the same engine as a submit: the API's
 * POST /v1/estimate and the studio's estimate both call this. An unknown model is 400
 * unknown_model; an input the model refuses throws the pricing engine's DomainError; a RUB account
 * without a rate is unpriceable.
 */
export async function accountEstimate(
  ctx: Pick<AppContext, "catalog" | "files" | "accounts" | "fx">,
  accountId: string,
  modelId: string,
  raw: Record<string, unknown>,
  access: ModelAccess,
): Promise<AccountEstimate> {
  // As every door: a key's allowed_models is checked before the catalog.
  checkModelAllowed(access, modelId, "model_id");
  const model = ctx.catalog.get(modelId);
  if (!model)
    throw new DomainError("unknown_model", `Model "${modelId}" is not in the catalog.`, {
      param: "model_id",
    });
  // As at submit: the value forms clients send ("5s", image_size) priced as the schema's forms.
  const input = normalizeInputForms(model, raw) as Record<string, unknown>;
  // As at submit: an upscale of an uploaded file is priced on the file's measured size.
  const files = model.kind === "text" ? new Map() : await resolveFileRefs(ctx.files, accountId, input);
  const e = estimate(model, input, { imageSize: uploadedImageSize(files) });
  const account = (await ctx.accounts.getAccount(accountId))!;
  const out: AccountEstimate = {
    object: "estimate",
    model_id: e.model_id,
    unit: e.unit,
    units: e.units,
    resolution: e.resolution,
    price_usd_micro: e.price_usd_micro.toString(),
    currency: account.currency,
  };
  if (account.currency === "USD") return out;
  const rate = await ctx.fx.get(account.currency);
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
}
