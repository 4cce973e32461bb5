/**
 * Integer arithmetic shared by every pricing rule. Money is bigint micro-units; nothing here
 * touches a float, so a price computed twice from the same inputs is always the same integer.
 */

/** Pixels in one megapixel: per-MP prices are divided by this, exactly. */
export const PIXELS_PER_MEGAPIXEL = 1_000_000n;

/**
 * ceil(numerator / denominator) for numerator >= 0 and denominator > 0. Rounding up means a
 * caller never pays less than the listed price, and because it is monotonic a smaller quantity
 * can never round to a larger amount (which is what keeps every charge <= its hold).
 */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError("ceilDiv: denominator must be positive");
  if (numerator < 0n) throw new RangeError("ceilDiv: numerator must be non-negative");
  return (numerator + denominator - 1n) / denominator;
}

/** The smaller of two bigints (Math.min does not take bigint). */
export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/**
 * The price of `quantity` base measures (seconds, images or pixels) at `unitPrice` per unit,
 * where one unit is `perUnit` base measures (1, or 1,000,000 pixels for a megapixel).
 * The single formula behind quotes and final charges, so the two can never disagree.
 */
export function amountFor(quantity: bigint, unitPrice: bigint, perUnit: bigint): bigint {
  return ceilDiv(quantity * unitPrice, perUnit);
}

/** An exact decimal rendering of quantity / perUnit: (1048576n, 1000000n) -> "1.048576". */
export function formatQuantity(quantity: bigint, perUnit: bigint): string {
  if (perUnit === 1n) return quantity.toString();
  const digits = perUnit.toString().length - 1;
  if (perUnit !== 10n ** BigInt(digits))
    throw new RangeError("formatQuantity: perUnit must be a power of 10");
  const whole = quantity / perUnit;
  const frac = (quantity % perUnit).toString().padStart(digits, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole.toString();
}
