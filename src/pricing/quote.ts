import type { Unit } from "../catalog/model.ts";
import { stringifyWithBigints } from "../lib/json.ts";

/** Units of non-text models. */
export type MediaUnit = Exclude<Unit, "1M_tokens">;

/**
 * The price of one media job, computed before it runs and stored with it as the hold.
 * It carries the unit price and quantity, not only the total, so the final charge for a job
 * that delivered less (priceDelivery) is recomputed with the very same formula.
 *
 * Quantity is counted in the unit's base measure so it is always an integer:
 * seconds, images, or pixels for per-megapixel models (quantity_per_unit = 1,000,000).
 * amount_usd_micro = ceil(quantity * unit_price_usd_micro / quantity_per_unit).
 */
export interface MediaQuote {
  model_id: string;
  unit: MediaUnit;
  /** Billable quantity in base measures: seconds, images or pixels. */
  quantity: bigint;
  /** Base measures per billing unit: 1n, or 1_000_000n pixels per megapixel. */
  quantity_per_unit: bigint;
  /** quantity / quantity_per_unit as an exact decimal string ("5", "1.048576"), for display. */
  units: string;
  /** The tier that set the unit price, or null for a model without tiers. */
  resolution: string | null;
  /** Integer micro-USD per unit (per second, image or megapixel). */
  unit_price_usd_micro: bigint;
  amount_usd_micro: bigint;
}

/**
 * The price of a text call: the reservation made from the prompt's token count plus the
 * completion tokens allowed. The actual charge (chargeForTextUsage) never exceeds it.
 */
export interface TextQuote {
  model_id: string;
  unit: "1M_tokens";
  input_tokens: number;
  output_tokens: number;
  /** (input_tokens + output_tokens) / 1M as an exact decimal string, for display. */
  units: string;
  input_price_usd_micro: bigint;
  output_price_usd_micro: bigint;
  amount_usd_micro: bigint;
}

export type Quote = MediaQuote | TextQuote;

/** A quote as stored with its job: bigints as decimal strings. */
export function serializeQuote(q: Quote): string {
  return stringifyWithBigints(q);
}

/** A media job's stored quote (serializeQuote) read back, its amounts as bigints again. */
export function parseQuote(text: string): MediaQuote {
  const q = JSON.parse(text) as Record<string, unknown>;
  return {
    ...(q as unknown as MediaQuote),
    quantity: BigInt(q.quantity as string),
    quantity_per_unit: BigInt(q.quantity_per_unit as string),
    unit_price_usd_micro: BigInt(q.unit_price_usd_micro as string),
    amount_usd_micro: BigInt(q.amount_usd_micro as string),
  };
}
