import { describe, expect, test } from "bun:test";
import { preferWait } from "../../src/replicate/predictions.ts";

describe("Prefer: wait", () => {
  test("wait alone is 60 s; wait=n is n, above 60 read as 60 (the client may send wait=120)", () => {
    expect(preferWait(null)).toBeNull();
    expect(preferWait("respond-async")).toBeNull();
    expect(preferWait("wait")).toBe(60);
    expect(preferWait("wait=5")).toBe(5);
    expect(preferWait("respond-async, wait=7")).toBe(7);
    expect(preferWait("Wait = 3")).toBe(3);
    expect(preferWait("wait=120")).toBe(60);
  });

  test("a wait that is not whole seconds from 1 is 400 naming Prefer", () => {
    for (const bad of ["wait=0", "wait=-1", "wait=1.5", "wait=soon", "wait=1e3"]) {
      expect(() => preferWait(bad)).toThrow(
        expect.objectContaining({ code: "validation_error", param: "Prefer" }),
      );
    }
  });
});
