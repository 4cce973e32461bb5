import type { Route } from "../catalog/model.ts";

/** Tokens per million: text routes cost per 1M input and output tokens. */
const PER_MILLION = 1_000_000n;

/**
 * round(numerator / denominator), halves up, for numerator >= 0 and denominator > 0. A cost is a
 * record of what the operator owes, not a charge to a customer: it is rounded to the nearest
 * micro-USD (2.5 -> 3, 2.4999 -> 2), not up as charges are (arith.ts ceilDiv).
 */
export function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError("roundHalfUp: denominator must be positive");
  if (numerator < 0n) throw new RangeError("roundHalfUp: numerator must be non-negative");
  return (2n * numerator + denominator) / (2n * denominator);
}

/**
 * What a media job cost upstream: the route's unit cost times the delivered quantity, the same
 * quantity the charge used (priceDelivery: images, seconds, or pixels with `perUnit` 1,000,000 per
 * megapixel). Null when the route has no cost configured: unknown, not zero.
 */
export function mediaCost(route: Route | undefined, quantity: bigint, perUnit: bigint): bigint | null {
  if (!route || route.cost_usd_micro === null) return null;
  return roundHalfUp(quantity * BigInt(route.cost_usd_micro), perUnit);
}

/**
 * What a chat call cost upstream: input and output tokens (the usage the charge used) times the
 * route's per-1M costs, summed before the one rounding. Null when the route has no cost.
 */
export function textCost(route: Route | undefined, inputTokens: number, outputTokens: number): bigint | null {
  if (!route || route.cost_input_usd_micro === null || route.cost_output_usd_micro === null) return null;
  const total =
    BigInt(inputTokens) * BigInt(route.cost_input_usd_micro) +
    BigInt(outputTokens) * BigInt(route.cost_output_usd_micro);
  return roundHalfUp(total, PER_MILLION);
}
