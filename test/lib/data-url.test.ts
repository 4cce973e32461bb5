import { describe, expect, test } from "bun:test";
import { DATA_URL_MAX_BYTES, decodeDataUrl } from "../../src/lib/data-url.ts";

describe("decodeDataUrl", () => {
  test("base64 and percent-encoded payloads, with the declared type lower-cased", () => {
    expect(decodeDataUrl("data:Image/PNG;base64,AAEC")).toEqual({
      ok: true,
      bytes: Uint8Array.of(0, 1, 2),
      type: "image/png",
    });
    expect(decodeDataUrl("data:,a%20b")).toEqual({
      ok: true,
      bytes: new TextEncoder().encode("a b"),
      type: undefined,
    });
  });

  test("malformed, empty", () => {
    expect(decodeDataUrl("data:image/png;base64")).toEqual({ ok: false, why: "malformed" });
    expect(decodeDataUrl("https://x/a.png")).toEqual({ ok: false, why: "malformed" });
    expect(decodeDataUrl("data:image/png;base64,@@@")).toEqual({ ok: false, why: "malformed" });
    expect(decodeDataUrl("data:,%E0%A4%A")).toEqual({ ok: false, why: "malformed" });
    expect(decodeDataUrl("data:image/png;base64,")).toEqual({ ok: false, why: "empty" });
  });

  test("the size is bounded from the encoded length, before decoding", () => {
    // 8 base64 characters hold 6 bytes: over a 5-byte limit, refused without being decoded.
    expect(decodeDataUrl("data:;base64,AAAAAAAA", 5)).toEqual({ ok: false, why: "too_large" });
    expect(decodeDataUrl("data:;base64,AAAAAAAA", 6).ok).toBe(true);
    expect(decodeDataUrl("data:,abcdef", 5)).toEqual({ ok: false, why: "too_large" });
    expect(DATA_URL_MAX_BYTES).toBe(64 * 1024 * 1024);
  });
});
