import { amountFor } from "./arith.ts";
import type { MediaQuote } from "./quote.ts";

/**
 * The final charge of a media job that delivered `actualQuantity` base measures (seconds,
 * images, or pixels for per-MP quotes; see MediaQuote.quantity), as measured by priceDelivery. The actual is clamped to [0, quoted quantity], so the charge is never above
 * the hold (billing rule 3), and it uses the quote's own unit price and rounding, so delivering
 * everything charges exactly the quoted amount.
 */
export function chargeForActualQuantity(quote: MediaQuote, actualQuantity: bigint): bigint {
  const clamped =
    actualQuantity < 0n ? 0n : actualQuantity > quote.quantity ? quote.quantity : actualQuantity;
  return amountFor(clamped, quote.unit_price_usd_micro, quote.quantity_per_unit);
}

/**
 * The price of `actualUnits` catalog units (seconds, images or megapixels) on a quote, as used for
 * a provider's job-level claim when the delivered files cannot be measured (see priceDelivery).
 *
 * - A fractional count (4.3 s) is rounded UP to whole units before pricing: a started second is
 *   billed, as the quote itself counts whole units. Whole units are then converted to the quote's
 *   base measure (x 1,000,000 pixels per megapixel) and clamped like chargeForActualQuantity,
 *   so "2 MP" against a 1.048576 MP quote charges the quote, and "1 MP" charges 1 MP.
 * - Negative or -Infinity counts charge 0; +Infinity charges the quote. NaN is a caller bug and
 *   throws rather than guessing an amount.
 */
export function chargeForActualUnits(quote: MediaQuote, actualUnits: number | bigint): bigint {
  return chargeForActualQuantity(quote, quantityOfUnits(quote, actualUnits));
}

/**
 * Catalog units (a claim such as "4.3 s" or "2 MP") as the quote's base measure, started units
 * rounded up: negative or -Infinity -> 0, +Infinity -> the quote's quantity, NaN throws.
 */
export function quantityOfUnits(quote: MediaQuote, units: number | bigint): bigint {
  let whole: bigint;
  if (typeof units === "bigint") {
    whole = units;
  } else if (Number.isNaN(units)) {
    throw new RangeError("chargeForActualUnits: actual units is NaN");
  } else if (units === Number.POSITIVE_INFINITY) {
    return quote.quantity;
  } else if (units <= 0) {
    whole = 0n;
  } else {
    whole = BigInt(Math.ceil(units));
  }
  return whole < 0n ? 0n : whole * quote.quantity_per_unit;
}
