import { describe, expect, test } from "bun:test";
import { concatBytes } from "../../src/lib/bytes.ts";

describe("concatBytes", () => {
  test("joins the parts in order, views included", () => {
    const whole = Uint8Array.of(9, 9, 1, 2, 3, 9);
    const view = whole.subarray(2, 5);
    expect(concatBytes([Uint8Array.of(0), view, new Uint8Array(0), Uint8Array.of(4, 5)])).toEqual(
      Uint8Array.of(0, 1, 2, 3, 4, 5),
    );
    expect(concatBytes([])).toEqual(new Uint8Array(0));
  });
});
