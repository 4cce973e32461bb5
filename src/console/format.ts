/** Display formatting for console pages (integer math only; money stays bigint micro-units). */
import { formatMicro } from "../lib/money.ts";

/**
 * 1234567890n, "USD" -> "1,234.56789 USD": the exact amount (formatMicro: at least two decimals,
 * trailing zeros trimmed, never rounded), thousands grouped, then the currency code.
 */
export function formatMoney(micro: bigint | number, currency: string): string {
  const text = formatMicro(micro);
  const neg = text.startsWith("-");
  const [whole, frac] = (neg ? text.slice(1) : text).split(".") as [string, string];
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${neg ? "-" : ""}${grouped}.${frac} ${currency}`;
}

/** Epoch seconds or milliseconds -> "2026-11-23 15:04 UTC". */
export function formatTime(epoch: number | bigint, unit: "s" | "ms" = "s"): string {
  const ms = unit === "s" ? Number(epoch) * 1000 : Number(epoch);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Display names of the catalog's billing units. */
export const UNIT_LABEL: Record<string, string> = {
  second: "second",
  image: "image",
  megapixel: "megapixel",
  "1M_tokens": "1M tokens",
};

/** "3 images", "1 second", "0.5 megapixels", "0.002 M tokens": every page counts units this way. */
export function unitsText(units: string | number | bigint, unit: string): string {
  const n = String(units);
  if (unit === "1M_tokens") return `${n} M tokens`;
  const noun = UNIT_LABEL[unit] ?? unit;
  return `${n} ${n === "1" ? noun : `${noun}s`}`;
}
