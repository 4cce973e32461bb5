import { describe, expect, test } from "bun:test";
import { CODE_ALPHABET, CODE_LENGTH, codeHash, newCodeText, normaliseCode } from "../../src/codes/code.ts";

describe("redeem code text", () => {
  test("four groups of five from an alphabet without look-alikes", () => {
    expect(CODE_ALPHABET).toHaveLength(32);
    for (const ch of "01IO") expect(CODE_ALPHABET).not.toContain(ch);
    for (let i = 0; i < 200; i++) {
      const code = newCodeText();
      expect(code).toMatch(/^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){3}$/);
      expect(normaliseCode(code)).toHaveLength(CODE_LENGTH);
    }
  });

  test("codes are distinct and every letter of the alphabet is used", () => {
    const seen = new Set<string>();
    const letters = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const code = newCodeText();
      seen.add(code);
      for (const ch of code.replaceAll("-", "")) letters.add(ch);
    }
    expect(seen.size).toBe(2000);
    expect(letters.size).toBe(32);
  });

  test("case, dashes and spaces do not matter", () => {
    const code = newCodeText();
    const n = normaliseCode(code)!;
    for (const variant of [
      code.toLowerCase(),
      n,
      ` ${code} `,
      code.replaceAll("-", " "),
      `${n.slice(0, 10)}\t${n.slice(10)}`,
    ]) {
      expect(normaliseCode(variant)).toBe(n);
      expect(codeHash(normaliseCode(variant)!).equals(codeHash(n))).toBe(true);
    }
  });

  test("anything else is not a code", () => {
    for (const bad of [
      "",
      "x",
      "AAAAA-AAAAA-AAAAA-AAAA",
      "AAAAA-AAAAA-AAAAA-AAAAAA",
      "AAAAA-AAAAA-AAAAA-AAAA0",
      "AAAAA_AAAAA_AAAAA_AAAAA",
      "ÄAAAA-AAAAA-AAAAA-AAAAA",
    ])
      expect(normaliseCode(bad)).toBeNull();
  });

  test("the stored digest is SHA-256 of the normalised form", () => {
    const h = codeHash("ABCDEFGHJKABCDEFGHJK");
    expect(h).toHaveLength(32);
    expect(h.toString("hex")).toBe(
      new Bun.CryptoHasher("sha256").update("ABCDEFGHJKABCDEFGHJK").digest("hex"),
    );
  });
});
