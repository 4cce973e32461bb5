import { formatQuantity } from "./arith.ts";
import type { MediaQuote } from "./quote.ts";
import { chargeForActualQuantity, quantityOfUnits } from "./settle.ts";

/**
 * What one delivered output is, as the settlement sees it: each value measured from the stored
 * file when its format allows, else the provider's declaration for that output, else null.
 */
export interface DeliveredOutput {
  width: number | null;
  height: number | null;
  /** Seconds of playback. */
  duration: number | null;
  /** A still image: no duration by nature (a thumbnail next to a video counts 0 seconds). */
  still: boolean;
}

export interface Delivery {
  /** Delivered quantity in the quote's base measure (images, seconds, or pixels), capped at the quote. */
  quantity: bigint;
  /** quantity in catalog units as an exact decimal ("3", "1.048576"): the record's actual_units. */
  units: string;
  /** The charge: the quote's formula applied to the delivered quantity; never above the quote. */
  amount_usd_micro: bigint;
  /** True when some output could not be measured nor was declared, so the request's units were assumed. */
  assumed: boolean;
}

const positive = (n: number | null | undefined): n is number =>
  typeof n === "number" && Number.isFinite(n) && n > 0;

/** Whole seconds billed for a duration: a started second counts, after rounding to the millisecond. */
export function billedSeconds(duration: number): bigint {
  if (!(duration > 0)) return 0n;
  if (!Number.isFinite(duration)) return BigInt(Number.MAX_SAFE_INTEGER);
  const ms = BigInt(Math.round(duration * 1000));
  return (ms + 999n) / 1000n;
}

/**
 * The charge of a completed media job, from what it delivered (docs/money.md, "Charge equals
 * delivery"):
 * - per image: the number of delivered outputs;
 * - per megapixel: the sum of width x height over the delivered images;
 * - per second: the longest delivered clip, in started seconds (still images count 0).
 * An output whose unit is neither measured nor declared is assumed to be what was asked (its share
 * of the quote: the whole quote for megapixels and seconds); then, and only then, the provider's
 * job-level claim (`claimedUnits`, e.g. a duration in its result body) may lower it. The result is
 * capped at the quote and priced with the quote's own unit price and rounding, so a full delivery
 * charges exactly the hold, and a smaller one charges the same formula on the smaller quantity.
 */
export function priceDelivery(
  quote: MediaQuote,
  outputs: readonly DeliveredOutput[],
  claimedUnits?: number | null,
): Delivery {
  let quantity = 0n;
  let assumed = false;
  switch (quote.unit) {
    case "image":
      quantity = BigInt(outputs.length);
      break;
    case "megapixel":
      for (const o of outputs) {
        if (positive(o.width) && positive(o.height)) {
          quantity += BigInt(Math.round(o.width)) * BigInt(Math.round(o.height));
        } else {
          quantity += quote.quantity;
          assumed = true;
        }
      }
      break;
    case "second":
      for (const o of outputs) {
        let seconds: bigint;
        if (positive(o.duration)) seconds = billedSeconds(o.duration);
        else if (o.still) seconds = 0n;
        else {
          seconds = quote.quantity;
          assumed = true;
        }
        if (seconds > quantity) quantity = seconds;
      }
      break;
  }
  if (assumed && typeof claimedUnits === "number" && !Number.isNaN(claimedUnits)) {
    const claimed = quantityOfUnits(quote, claimedUnits);
    if (claimed < quantity) quantity = claimed;
  }
  if (quantity > quote.quantity) quantity = quote.quantity;
  return {
    quantity,
    units: formatQuantity(quantity, quote.quantity_per_unit),
    amount_usd_micro: chargeForActualQuantity(quote, quantity),
    assumed,
  };
}
