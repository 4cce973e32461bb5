import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { HASH_SLICE_BYTES, sha256Hex } from "../../src/lib/hash.ts";

describe("sha256Hex", () => {
  test("the SHA-256 of the whole, at and around the slice boundaries", async () => {
    const S = HASH_SLICE_BYTES;
    for (const n of [0, 1, 1000, S - 1, S, S + 1, 3 * S + 5]) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 131 + 7) & 255);
      expect([n, await sha256Hex(bytes)]).toEqual([n, createHash("sha256").update(bytes).digest("hex")]);
    }
  });

  test("the event loop turns while 64 MiB are hashed", async () => {
    // About 40 ms of SHA-256 in one piece: no timer could fire meanwhile.
    const bytes = new Uint8Array(64 * 1024 * 1024).fill(3);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await sha256Hex(bytes);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });
});
