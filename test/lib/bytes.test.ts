import { describe, expect, test } from "bun:test";
import { ascii, concatBytes } from "../../src/lib/bytes.ts";

describe("concatBytes", () => {
  test("joins the parts in order, views included", () => {
    const whole = Uint8Array.of(9, 9, 1, 2, 3, 9);
    const view = whole.subarray(2, 5);
    expect(concatBytes([Uint8Array.of(0), view, new Uint8Array(0), Uint8Array.of(4, 5)])).toEqual(
      Uint8Array.of(0, 1, 2, 3, 4, 5),
    );
    expect(concatBytes([])).toEqual(new Uint8Array(0));
  });

  test("ascii reads n bytes as text, or nothing when they run past the end", () => {
    const b = new TextEncoder().encode("RIFF....WEBP");
    expect(ascii(b, 0, 4)).toBe("RIFF");
    expect(ascii(b, 8, 4)).toBe("WEBP");
    expect(ascii(b, 10, 4)).toBe("");
    expect(ascii(Uint8Array.of(0x89, 0xff), 0, 2)).toBe("\x89\xff");
  });
});
