import type { Model, Unit } from "../catalog/model.ts";
import { type MediaPricingOptions, priceMediaInput } from "./media.ts";
import type { Quote } from "./quote.ts";
import { estimateTextInput } from "./text.ts";

/**
 * The uniform result behind POST /v1/estimate, for every kind. The HTTP layer renders
 * price_usd_micro as a decimal string and adds price_rub_micro for RUB accounts
 * (usdMicroToRubMicro with the current rate).
 */
export interface Estimate {
  model_id: string;
  unit: Unit;
  /** Exact decimal count of units: seconds, images, megapixels, or millions of tokens. */
  units: string;
  price_usd_micro: bigint;
  /** The priced tier for tiered models, else null. */
  resolution: string | null;
  /** The full quote, to store as the hold (media) or reservation (text). */
  quote: Quote;
}

export function estimate(model: Model, input: unknown, opts: MediaPricingOptions = {}): Estimate {
  const quote: Quote =
    model.kind === "text" ? estimateTextInput(model, input) : priceMediaInput(model, input, opts);
  return {
    model_id: model.id,
    unit: quote.unit,
    units: quote.units,
    price_usd_micro: quote.amount_usd_micro,
    resolution: "resolution" in quote ? quote.resolution : null,
    quote,
  };
}
