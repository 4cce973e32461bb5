import { describe, expect, test } from "bun:test";
import { MAX_RATE_MICRO, parseRate, usdMicroToRubMicro } from "../../src/pricing/fx.ts";
import { expectDomainError } from "./models.ts";

describe("parseRate", () => {
  test("decimal strings to micro-units per USD", () => {
    expect(parseRate("92.5")).toBe(92_500_000n);
    expect(parseRate("92")).toBe(92_000_000n);
    expect(parseRate("0.000001")).toBe(1n);
    expect(parseRate("91.123456")).toBe(91_123_456n);
    expect(parseRate(" 100.10 ")).toBe(100_100_000n);
    expect(parseRate("007.5")).toBe(7_500_000n);
    expect(parseRate("1000000")).toBe(MAX_RATE_MICRO);
  });

  test.each([
    ["", "decimal"],
    ["abc", "decimal"],
    ["-92.5", "decimal"],
    ["+92.5", "decimal"],
    ["9e1", "decimal"],
    ["92,5", "decimal"],
    [".5", "decimal"],
    ["5.", "decimal"],
    ["Infinity", "decimal"],
    ["NaN", "decimal"],
    ["0x10", "decimal"],
    ["1 000", "decimal"],
    ["0", "above 0"],
    ["0.000000", "above 0"],
    ["92.1234567", "6 decimal"],
    ["0.0000001", "6 decimal"],
    ["1000000.000001", "maximum"],
    ["99999999999999999999999", "maximum"],
    ["9".repeat(100_000), "maximum"],
  ])("rejects %p (%s)", (text, why) => {
    const err = expectDomainError(() => parseRate(text), "validation_error", "rate");
    expect(err.message).toContain(why);
  });

  test("a non-string is rejected, not crashed on", () => {
    expectDomainError(() => parseRate(92.5 as unknown as string), "validation_error", "rate");
  });
});

describe("usdMicroToRubMicro", () => {
  test("ceil(usd x rate / 1e6)", () => {
    // 1 USD at 92.5 = 92.5 RUB
    expect(usdMicroToRubMicro(1_000_000n, 92_500_000n)).toBe(92_500_000n);
    // 1 micro-USD at 92.5 = 92.5 micro-RUB -> 93
    expect(usdMicroToRubMicro(1n, 92_500_000n)).toBe(93n);
    // 2098 micro-USD at 91.123456 = 191,177.010688 -> 191,178
    expect(usdMicroToRubMicro(2098n, 91_123_456n)).toBe(191_178n);
    expect(usdMicroToRubMicro(0n, 92_500_000n)).toBe(0n);
  });

  test("a charge below its hold stays at or below it after conversion", () => {
    const rate = 92_500_001n;
    const hold = usdMicroToRubMicro(100_001n, rate);
    const charge = usdMicroToRubMicro(100_000n, rate);
    expect(charge).toBeLessThanOrEqual(hold);
    expect(charge).toBe(9_250_001n); // 9250000.1 -> up
    expect(hold).toBe(9_250_093n); // 9250092.600001 -> up
  });

  test("negative amounts and non-positive rates are caller bugs", () => {
    expect(() => usdMicroToRubMicro(-1n, 1n)).toThrow(RangeError);
    expect(() => usdMicroToRubMicro(1n, 0n)).toThrow(RangeError);
    expect(() => usdMicroToRubMicro(1n, MAX_RATE_MICRO + 1n)).toThrow(RangeError);
  });
});
