import { DomainError } from "../lib/errors.ts";
import { ceilDiv } from "./arith.ts";

/**
 * Exchange rates are integers: micro-units of the account currency per 1 USD
 * (92.5 RUB/USD -> 92_500_000n). A rate is read once at reservation and stored with the job;
 * the hold and the charge are both converted with it.
 */
export const RATE_SCALE = 1_000_000n;

/** Highest accepted rate: 1,000,000 currency units per USD. Far above any real currency, low enough to catch typos. */
export const MAX_RATE_MICRO = 1_000_000n * RATE_SCALE;

/**
 * micro-USD -> micro-RUB (or any account currency): ceil(usdMicro x rateMicro / 1,000,000).
 * Rounding up never undercharges; since it is monotonic in usdMicro, a charge <= its hold in
 * USD stays <= its hold after conversion with the same rate.
 */
export function usdMicroToRubMicro(usdMicro: bigint, rateMicro: bigint): bigint {
  if (usdMicro < 0n) throw new RangeError("usdMicroToRubMicro: amount must be non-negative");
  if (rateMicro <= 0n || rateMicro > MAX_RATE_MICRO)
    throw new RangeError("usdMicroToRubMicro: rate out of range");
  return ceilDiv(usdMicro * rateMicro, RATE_SCALE);
}

/**
 * "92.5" -> 92_500_000n. A plain decimal (digits, optional point and 1-6 decimals; surrounding
 * spaces ignored), above 0 and at most MAX_RATE_MICRO. Anything else is validation_error
 * (param "rate") with a message saying why, for the CLI and the admin API alike.
 */
export function parseRate(text: string): bigint {
  const fail = (why: string): never => {
    throw new DomainError("validation_error", `rate ${why}.`, { param: "rate" });
  };
  const m = /^(\d+)(?:\.(\d+))?$/.exec(typeof text === "string" ? text.trim() : "");
  if (!m) return fail('must be a decimal number of currency units per 1 USD, such as "92.5"');
  const [, whole, frac = ""] = m as unknown as [string, string, string | undefined];
  if (frac.length > 6) fail("has more than 6 decimal places");
  // Bound the digits before BigInt so a megabyte of digits is rejected cheaply.
  if (whole.replace(/^0+/, "").length > 7)
    fail(`is above the maximum of ${MAX_RATE_MICRO / RATE_SCALE} per USD`);
  const micro = BigInt(whole) * RATE_SCALE + BigInt(frac.padEnd(6, "0"));
  if (micro === 0n) fail("must be above 0");
  if (micro > MAX_RATE_MICRO) fail(`is above the maximum of ${MAX_RATE_MICRO / RATE_SCALE} per USD`);
  return micro;
}
