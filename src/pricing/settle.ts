import { amountFor } from "./arith.ts";
import type { MediaQuote } from "./quote.ts";

/**
 * The final charge of a media job that delivered `actualQuantity` base measures (seconds,
 * images, or pixels for per-MP quotes; see MediaQuote.quantity), e.g. an upstream reporting the
 * real output size. The actual is clamped to [0, quoted quantity], so the charge is never above
 * the hold (billing rule 3), and it uses the quote's own unit price and rounding, so delivering
 * everything charges exactly the quoted amount.
 */
export function chargeForActualQuantity(quote: MediaQuote, actualQuantity: bigint): bigint {
  const clamped =
    actualQuantity < 0n ? 0n : actualQuantity > quote.quantity ? quote.quantity : actualQuantity;
  return amountFor(clamped, quote.unit_price_usd_micro, quote.quantity_per_unit);
}

/**
 * The final charge of a media job that delivered `actualUnits` catalog units: seconds, images,
 * or megapixels (sandbox `actual_units`, an upstream's reported duration).
 *
 * - A fractional count (4.3 s) is rounded UP to whole units before pricing: a started second is
 *   billed, as the quote itself counts whole units. Whole units are then converted to the quote's
 *   base measure (x 1,000,000 pixels per megapixel) and clamped like chargeForActualQuantity,
 *   so "2 MP" against a 1.048576 MP quote charges the quote, and "1 MP" charges 1 MP.
 * - Negative or -Infinity counts charge 0; +Infinity charges the quote. NaN is a caller bug and
 *   throws rather than guessing an amount.
 */
export function chargeForActualUnits(quote: MediaQuote, actualUnits: number | bigint): bigint {
  let whole: bigint;
  if (typeof actualUnits === "bigint") {
    whole = actualUnits;
  } else if (Number.isNaN(actualUnits)) {
    throw new RangeError("chargeForActualUnits: actual units is NaN");
  } else if (actualUnits === Number.POSITIVE_INFINITY) {
    return quote.amount_usd_micro;
  } else if (actualUnits <= 0) {
    whole = 0n;
  } else {
    whole = BigInt(Math.ceil(actualUnits));
  }
  return chargeForActualQuantity(quote, whole * quote.quantity_per_unit);
}
