/** Display formatting for console pages (integer math only; money stays bigint micro-units). */
import { formatMicro } from "../lib/money.ts";

/**
 * 1234567890n, "USD" -> "1,234.56789 USD": the exact amount (formatMicro: at least two decimals,
 * trailing zeros trimmed, never rounded), thousands grouped, then the currency code.
 */
export function formatMoney(micro: bigint | number, currency: string): string {
  const text = formatMicro(micro);
  const neg = text.startsWith("-");
  const dot = text.indexOf(".");
  return `${neg ? "-" : ""}${groupThousands(text.slice(neg ? 1 : 0, dot))}${text.slice(dot)} ${currency}`;
}

/** "1234567" -> "1,234,567" (a regex with a lookahead took a quarter of rendering a statement). */
function groupThousands(digits: string): string {
  if (digits.length <= 3) return digits;
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return out;
}

/**
 * Money as the pages show it in figures and tables (the one display rule): from 1 unit up, cents
 * (cut toward zero, so a balance never reads more than it is: 24.330804 -> "24.33 USD", beside
 * "0.02 USD"); below 1 unit the exact amount, whose digits are the price (0.015, 0.000123).
 * `exact` is set when the display dropped digits (the page puts it in a title; the CSV has them all).
 */
export function displayMoney(micro: bigint, currency: string): { text: string; exact: string | null } {
  const abs = micro < 0n ? -micro : micro;
  if (abs < 1_000_000n || abs % 10_000n === 0n) return { text: formatMoney(micro, currency), exact: null };
  const cut = (abs / 10_000n) * 10_000n;
  return { text: formatMoney(micro < 0n ? -cut : cut, currency), exact: formatMoney(micro, currency) };
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

/** Browsers by the token that names them, most specific first (Edge and Opera also say "Chrome"). */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, "Edge"],
  [/\bOPR\/(\d+)/, "Opera"],
  [/\bFirefox\/(\d+)/, "Firefox"],
  [/\bFxiOS\/(\d+)/, "Firefox"],
  [/\bCriOS\/(\d+)/, "Chrome"],
  [/(?:\b|Headless)Chrom(?:e|ium)\/(\d+)/, "Chrome"],
  [/\bVersion\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, "Safari"],
  [/^curl\/(\d+)/, "curl"],
];
const SYSTEMS: [RegExp, string][] = [
  [/\b(?:iPhone|iPad|iPod)\b/, "iOS"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];

/**
 * A session's user agent as a person reads it: "Chrome 131 on Windows", "Safari 17 on iOS",
 * "Firefox 133" (no known system), or "Unknown browser"; the raw string stays in the page's title.
 */
export function describeUserAgent(ua: string | null): string {
  if (!ua) return "Unknown browser";
  let browser: string | null = null;
  for (const [re, name] of BROWSERS) {
    const m = re.exec(ua);
    if (m) {
      browser = `${name} ${m[1]}`;
      break;
    }
  }
  if (/HeadlessChrome\//.test(ua)) browser = browser?.replace("Chrome", "Headless Chrome") ?? null;
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1] ?? null;
  if (!browser) return system ? `A browser on ${system}` : "Unknown browser";
  return system ? `${browser} on ${system}` : browser;
}

/**
 * A duration as people read it, cut toward zero: 850 -> "850 ms", 1400 -> "1.4 s", 12_300 ->
 * "12 s", 125_000 -> "2 min 5 s", 3_780_000 -> "1 h 3 min", 187_200_000 -> "2 d 4 h".
 */
export function durationText(ms: number): string {
  const v = Math.max(0, Math.floor(ms));
  if (v < 1000) return `${v} ms`;
  if (v < 10_000) return `${Math.floor(v / 100) / 10} s`;
  const s = Math.floor(v / 1000);
  const two = (big: number, bigUnit: string, small: number, smallUnit: string) =>
    small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
  if (s < 60) return `${s} s`;
  if (s < 3600) return two(Math.floor(s / 60), "min", s % 60, "s");
  if (s < 86_400) return two(Math.floor(s / 3600), "h", Math.floor((s % 3600) / 60), "min");
  return two(Math.floor(s / 86_400), "d", Math.floor((s % 86_400) / 3600), "h");
}
