import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";

export interface UnitPrice {
  resolution: string | null;
  unit_price_usd_micro: bigint;
}

/**
 * The per-unit price of a media model, picked by `resolution` for tiered models.
 *
 * Decision: an omitted resolution on a tiered model means the FIRST listed resolution.
 * Operators list tiers in the order they want as the default (the sandbox lists its cheapest,
 * 480p, first), the catalog shows that order, and the rule is predictable for clients; the
 * model's provider is expected to render that same tier when no resolution is sent.
 * A resolution sent to a model without tiers does not affect the price and is ignored here.
 */
export function unitPriceFor(model: Model, resolution: unknown): UnitPrice {
  if (!model.resolutions || !model.resolution_prices_usd_micro) {
    if (model.price_usd_micro === null) throw new Error(`model ${model.id} has no price_usd_micro`);
    return { resolution: null, unit_price_usd_micro: BigInt(model.price_usd_micro) };
  }
  const listed = model.resolutions;
  let picked: string;
  if (resolution === undefined) {
    picked = listed[0]!;
  } else if (typeof resolution !== "string") {
    throw new DomainError("validation_error", `resolution must be a string, one of: ${listed.join(", ")}.`, {
      param: "resolution",
    });
  } else if (!listed.includes(resolution)) {
    throw new DomainError(
      "unpriceable",
      `Resolution "${resolution.slice(0, 32)}" has no price for ${model.id}; use one of: ${listed.join(", ")}.`,
      { param: "resolution" },
    );
  } else {
    picked = resolution;
  }
  // Own-property lookup only: a resolution named "__proto__" or "constructor" must not find a price.
  const price = Object.hasOwn(model.resolution_prices_usd_micro, picked)
    ? model.resolution_prices_usd_micro[picked]
    : undefined;
  if (price === undefined) throw new Error(`model ${model.id} lists resolution ${picked} without a price`);
  return { resolution: picked, unit_price_usd_micro: BigInt(price) };
}
