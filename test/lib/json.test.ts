import { describe, expect, test } from "bun:test";
import { bigintReplacer, stringifyWithBigints } from "../../src/lib/json.ts";

describe("stringifyWithBigints", () => {
  test("bigints become decimal strings at any depth; other values are untouched", () => {
    const value = { a: 1n, b: [-9_007_199_254_740_993n, 2], c: { d: "x", e: null, f: true } };
    expect(stringifyWithBigints(value)).toBe(
      '{"a":"1","b":["-9007199254740993",2],"c":{"d":"x","e":null,"f":true}}',
    );
    expect(JSON.stringify({ n: 0n }, bigintReplacer)).toBe('{"n":"0"}');
  });

  test("without bigints it writes what JSON.stringify writes", () => {
    const value = { s: "é\n", n: 1.5, a: [null], u: undefined };
    expect(stringifyWithBigints(value)).toBe(JSON.stringify(value));
  });
});
