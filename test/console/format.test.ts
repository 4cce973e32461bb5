import { describe, expect, test } from "bun:test";
import { describeUserAgent, displayMoney, formatMoney, unitsText } from "../../src/console/format.ts";
import { formatMicro } from "../../src/lib/money.ts";

describe("describeUserAgent: sessions read as browser and system", () => {
  const cases: [string | null, string][] = [
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome 131 on Windows",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
      "Edge 131 on Windows",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
      "Safari 17 on iOS",
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:133.0) Gecko/20100101 Firefox/133.0",
      "Firefox 133 on macOS",
    ],
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
      "Headless Chrome 131 on Linux",
    ],
    ["curl/8.5.0", "curl 8"],
    ["<b>x</b>", "Unknown browser"],
    [null, "Unknown browser"],
  ];
  for (const [ua, text] of cases) test(`${text}`, () => expect(describeUserAgent(ua)).toBe(text));
});

describe("unitsText", () => {
  test("one rule for units in words", () => {
    expect(unitsText("1", "image")).toBe("1 image");
    expect(unitsText("2", "image")).toBe("2 images");
    expect(unitsText(4, "second")).toBe("4 seconds");
    expect(unitsText("0.5", "megapixel")).toBe("0.5 megapixels");
    expect(unitsText("0.002", "1M_tokens")).toBe("0.002 M tokens");
  });
});

describe("displayMoney: one display rule for amounts", () => {
  test("cents from 1 unit up (cut toward zero, exact in `exact`); the exact amount below 1", () => {
    expect(displayMoney(24_330_804n, "USD")).toEqual({ text: "24.33 USD", exact: "24.330804 USD" });
    expect(displayMoney(24_339_999n, "USD")).toEqual({ text: "24.33 USD", exact: "24.339999 USD" });
    expect(displayMoney(-1_000_001n, "USD")).toEqual({ text: "-1.00 USD", exact: "-1.000001 USD" });
    expect(displayMoney(12_500_000n, "RUB")).toEqual({ text: "12.50 RUB", exact: null });
    expect(displayMoney(20_000n, "USD")).toEqual({ text: "0.02 USD", exact: null });
    expect(displayMoney(15_000n, "USD")).toEqual({ text: "0.015 USD", exact: null });
    expect(displayMoney(123n, "USD")).toEqual({ text: "0.000123 USD", exact: null });
    expect(displayMoney(0n, "USD")).toEqual({ text: "0.00 USD", exact: null });
  });
});

describe("formatMoney: thousands grouped", () => {
  test("every length of the whole part and both signs, as the grouping regex it replaced", () => {
    // The regex formatMoney used before (a quarter of a statement's rendering), as the reference.
    const reference = (micro: bigint, currency: string) => {
      const text = formatMicro(micro);
      const neg = text.startsWith("-");
      const [whole, frac] = (neg ? text.slice(1) : text).split(".") as [string, string];
      return `${neg ? "-" : ""}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${frac} ${currency}`;
    };
    let checked = 0;
    for (let digits = 1; digits <= 13; digits++) {
      for (const whole of [
        10n ** BigInt(digits - 1),
        10n ** BigInt(digits) - 1n,
        123456789012345n % 10n ** BigInt(digits),
      ]) {
        for (const frac of [0n, 5n, 120_000n, 999_999n]) {
          for (const sign of [1n, -1n]) {
            const micro = sign * (whole * 1_000_000n + frac);
            expect(formatMoney(micro, "USD")).toBe(reference(micro, "USD"));
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(13 * 3 * 4 * 2);
    expect(formatMoney(-1_234_567_000_000n, "RUB")).toBe("-1,234,567.00 RUB");
    expect(formatMoney(100_000_000_000n, "USD")).toBe("100,000.00 USD");
    expect(formatMoney(999_000_000n, "USD")).toBe("999.00 USD");
  });
});
