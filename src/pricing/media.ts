import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";
import { amountFor, formatQuantity, PIXELS_PER_MEGAPIXEL } from "./arith.ts";
import { billablePixels, type ImageSizeLookup } from "./megapixels.ts";
import type { MediaQuote, MediaUnit } from "./quote.ts";
import { asInput, type Input, readInteger } from "./read-input.ts";
import { unitPriceFor } from "./tiers.ts";

export interface MediaPricingOptions {
  /** Measures an uploaded file referenced by image_url (upscale per MP); see ImageSizeLookup. */
  imageSize?: ImageSizeLookup;
}

/**
 * Prices one non-text model input, before the job runs. The result is the hold placed on
 * submit and the estimate's price; errors are DomainError validation_error (a field is wrong or
 * above the model's max) or unpriceable (a value pricing needs is missing or has no price).
 */
export function priceMediaInput(model: Model, input: unknown, opts: MediaPricingOptions = {}): MediaQuote {
  if (model.kind === "text" || model.unit === "1M_tokens") {
    throw new Error(`priceMediaInput: ${model.id} is a text model (use priceText)`);
  }
  if (model.max === null) throw new Error(`priceMediaInput: model ${model.id} has no max`);
  const fields = asInput(input);
  const tier = unitPriceFor(model, fields.resolution);
  const unit: MediaUnit = model.unit;

  let quantity: bigint;
  let perUnit = 1n;
  switch (unit) {
    case "second":
      quantity = billableSeconds(model, fields);
      break;
    case "image":
      quantity = countOrDefault(model, fields, "num_images", "images");
      break;
    case "megapixel":
      quantity = billablePixels(model, fields, opts.imageSize);
      perUnit = PIXELS_PER_MEGAPIXEL;
      break;
  }
  return {
    model_id: model.id,
    unit,
    quantity,
    quantity_per_unit: perUnit,
    units: formatQuantity(quantity, perUnit),
    resolution: tier.resolution,
    unit_price_usd_micro: tier.unit_price_usd_micro,
    amount_usd_micro: amountFor(quantity, tier.unit_price_usd_micro, perUnit),
  };
}

/**
 * Seconds billed for video, avatar, audio and upscale-video models: `duration`, or the model's
 * default_units when omitted (docs/api.md "Money": not the maximum).
 * A reference-to-video model given a video_url is instead priced on input_duration_sec, the
 * length of the reference, so that the estimate equals the final charge; there it is required
 * and `duration` does not set the price.
 */
function billableSeconds(model: Model, input: Input): bigint {
  if (model.reference_video && input.video_url !== undefined) {
    if (input.input_duration_sec === undefined) {
      throw new DomainError(
        "unpriceable",
        `input_duration_sec (the reference video's length in seconds) is required to price ${model.id} with a video_url.`,
        { param: "input_duration_sec" },
      );
    }
    return readInteger(input.input_duration_sec, "input_duration_sec", {
      min: 1,
      max: model.max,
      noun: "seconds",
      maxLabel: `the max of ${model.id}`,
    });
  }
  return countOrDefault(model, input, "duration", "seconds");
}

/** A unit count from `param`, or default_units when omitted; always 1..max. */
function countOrDefault(model: Model, input: Input, param: string, noun: string): bigint {
  const value = input[param] === undefined ? (model.default_units ?? 1) : input[param];
  return readInteger(value, param, { min: 1, max: model.max, noun, maxLabel: `the max of ${model.id}` });
}
