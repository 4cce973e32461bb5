/**
 * Money is integer micro-units (1 unit = 1,000,000 micro). These helpers convert between
 * decimal strings and micro-units with string and bigint arithmetic only: no floats.
 */
export const MICRO = 1_000_000n;

/** 12345678n -> "12.345678"; trailing zeros trimmed to at least two decimals ("12.50"). */
export function formatMicro(micro: bigint | number): string {
  const v = BigInt(micro);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const whole = abs / MICRO;
  let frac = (abs % MICRO).toString().padStart(6, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${neg ? "-" : ""}${whole}.${frac}`;
}

/** Largest amount accepted anywhere: fits SQLite's signed 64-bit integer with room for sums. */
export const MAX_MICRO = 2n ** 62n;

/**
 * The largest balance an account may have: 10^18 micro-units, one trillion USD or RUB. Both
 * databases store balances as signed 64-bit integers (SQLite's INTEGER, PostgreSQL's BIGINT: at most
 * 2^63 - 1, about 9.22 x 10^18); past that SQLite turns the sum into a REAL that its STRICT table
 * refuses and PostgreSQL raises "bigint out of range", both a 500. The Ledger refuses a credit above
 * this limit before writing (400 validation_error naming it, docs/money.md), the same on both. A
 * round figure well below 2^63 - 1: a full balance plus the largest single amount (MAX_MICRO,
 * about 4.61 x 10^18) still fits, so no comparison on the way can overflow either.
 */
export const MAX_BALANCE_MICRO = 10n ** 18n;

/**
 * "12.50" -> 12500000n. Rejects signs unless allowed, more than 6 decimals (fractional micro),
 * exponents, and values beyond MAX_MICRO. Returns null for anything that is not such a decimal.
 */
export function parseDecimalToMicro(text: string, options: { allowNegative?: boolean } = {}): bigint | null {
  const m = /^(-)?(\d{1,19})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!m) return null;
  if (m[1] && !options.allowNegative) return null;
  const micro = BigInt(m[2]!) * MICRO + BigInt((m[3] ?? "").padEnd(6, "0"));
  if (micro > MAX_MICRO) return null;
  return m[1] ? -micro : micro;
}
