import { describe, expect, test } from "bun:test";
import {
  base32Decode,
  base32Encode,
  hotp,
  newTotpSecret,
  otpauthUrl,
  totpStep,
  verifyTotp,
} from "../../src/lib/totp.ts";

const SEED = Buffer.from("12345678901234567890", "ascii");

describe("HOTP (RFC 4226 appendix D)", () => {
  test("the ten test values", () => {
    const expected = [
      "755224",
      "287082",
      "359152",
      "969429",
      "338314",
      "254676",
      "287922",
      "162583",
      "399871",
      "520489",
    ];
    expect(expected.map((_, i) => hotp(SEED, i))).toEqual(expected);
  });
});

describe("TOTP (RFC 6238 appendix B, SHA-1)", () => {
  const vectors: [number, string][] = [
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"],
  ];
  test.each(vectors)("T = %d gives %s (8 digits) and its last 6 digits", (t, code) => {
    expect(hotp(SEED, totpStep(t), 8)).toBe(code);
    expect(hotp(SEED, totpStep(t))).toBe(code.slice(2));
  });

  test("verify accepts the code of now and of one step either side, not two", () => {
    const secret = base32Encode(SEED);
    const t = 1111111111;
    const step = totpStep(t);
    expect(verifyTotp(secret, hotp(SEED, step), t)).toBe(step);
    expect(verifyTotp(secret, hotp(SEED, step - 1), t)).toBe(step - 1);
    expect(verifyTotp(secret, hotp(SEED, step + 1), t)).toBe(step + 1);
    expect(verifyTotp(secret, hotp(SEED, step - 2), t)).toBeNull();
    expect(verifyTotp(secret, hotp(SEED, step + 2), t)).toBeNull();
  });

  test("a used step (or an earlier one) is refused when the caller passes it", () => {
    const secret = base32Encode(SEED);
    const t = 1234567890;
    const step = totpStep(t);
    expect(verifyTotp(secret, hotp(SEED, step), t, step)).toBeNull();
    expect(verifyTotp(secret, hotp(SEED, step - 1), t, step - 1)).toBeNull();
    expect(verifyTotp(secret, hotp(SEED, step), t, step - 1)).toBe(step);
  });

  test("malformed codes and secrets are refused, spaces inside a code are fine", () => {
    const secret = base32Encode(SEED);
    const t = 59;
    const code = hotp(SEED, totpStep(t));
    expect(verifyTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, t)).toBe(totpStep(t));
    for (const bad of ["", "12345", "1234567", "abcdef", "12345a"])
      expect(verifyTotp(secret, bad, t)).toBeNull();
    expect(verifyTotp("not base32!", code, t)).toBeNull();
  });
});

describe("base32 and otpauth", () => {
  test("RFC 4648 vectors round-trip (no padding)", () => {
    const cases: [string, string][] = [
      ["", ""],
      ["f", "MY"],
      ["fo", "MZXQ"],
      ["foo", "MZXW6"],
      ["foob", "MZXW6YQ"],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI"],
    ];
    for (const [plain, encoded] of cases) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded);
      expect(base32Decode(encoded)?.toString()).toBe(plain);
      expect(base32Decode(`${encoded.toLowerCase()}===`)?.toString()).toBe(plain);
    }
  });

  test("new secrets are 160 bits and differ", () => {
    const a = newTotpSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(a)!.length).toBe(20);
    expect(newTotpSecret()).not.toBe(a);
  });

  test("the otpauth URL carries secret, issuer and parameters", () => {
    const url = new URL(otpauthUrl("JBSWY3DPEHPK3PXP", "ann@example.com", "gengate"));
    expect(url.protocol).toBe("otpauth:");
    expect(url.host).toBe("totp");
    expect(decodeURIComponent(url.pathname)).toBe("/gengate:ann@example.com");
    expect(url.searchParams.get("secret")).toBe("JBSWY3DPEHPK3PXP");
    expect(url.searchParams.get("issuer")).toBe("gengate");
    expect(url.searchParams.get("digits")).toBe("6");
    expect(url.searchParams.get("period")).toBe("30");
    expect(url.searchParams.get("algorithm")).toBe("SHA1");
  });
});
