import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readPngSize } from "../../../../src/lib/image-size.ts";
import { encodePng, MAX_PNG_SIDE } from "../../../../src/providers/sandbox/media/index.ts";
import { decodePng } from "./decoders.ts";

function expectValidPng(bytes: Uint8Array, width: number, height: number, bpp: 3 | 4) {
  const png = decodePng(bytes);
  expect(png.chunks.map((c) => c.crcOk).every(Boolean)).toBe(true);
  expect(png.chunks[0]!.type).toBe("IHDR");
  expect(png.chunks.at(-1)!.type).toBe("IEND");
  expect(png.chunks.at(-1)!.data.length).toBe(0);
  expect(png.chunks.some((c) => c.type === "IDAT")).toBe(true);
  expect(png.width).toBe(width);
  expect(png.height).toBe(height);
  expect(png.bitDepth).toBe(8);
  expect(png.colorType).toBe(bpp === 3 ? 2 : 6);
  const ihdr = png.chunks[0]!.data;
  expect([ihdr[10], ihdr[11], ihdr[12]]).toEqual([0, 0, 0]);
  expect(png.raw.length).toBe(height * (1 + width * bpp));
  expect(png.filters.length).toBe(height);
  for (const f of png.filters) expect(f).toBeLessThanOrEqual(4);
  return png;
}

describe("encodePng", () => {
  test.each([
    [1, 1],
    [1, 7],
    [5, 1],
    [2, 3],
    [257, 129],
    [640, 360],
    [333, 1001],
  ])("%ix%i RGB is a valid PNG of that size", (w, h) => {
    expectValidPng(encodePng(w, h, `seed-${w}x${h}`), w, h, 3);
  });

  test("RGBA option: valid, transparent rounded corners, opaque centre", () => {
    const w = 200;
    const h = 120;
    const png = expectValidPng(encodePng(w, h, 9, { alpha: true }), w, h, 4);
    const alphaAt = (x: number, y: number) => png.pixels[(y * w + x) * 4 + 3];
    expect(alphaAt(0, 0)).toBe(0);
    expect(alphaAt(w - 1, 0)).toBe(0);
    expect(alphaAt(0, h - 1)).toBe(0);
    expect(alphaAt(w - 1, h - 1)).toBe(0);
    expect(alphaAt(w >> 1, h >> 1)).toBe(255);
    expect(alphaAt(w >> 1, 0)).toBe(255);
  });

  test("the picture is a smooth designed image: many colours, small neighbour differences", () => {
    const w = 320;
    const h = 200;
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7, "landscape"]) {
      const { pixels } = decodePng(encodePng(w, h, seed));
      const colours = new Set<number>();
      const rowSums = new Set<number>();
      let diff = 0;
      for (let y = 0; y < h; y++) {
        let rowSum = 0;
        for (let x = 0; x < w; x++) {
          const o = (y * w + x) * 3;
          colours.add((pixels[o]! << 16) | (pixels[o + 1]! << 8) | pixels[o + 2]!);
          rowSum += pixels[o]! + pixels[o + 1]! + pixels[o + 2]!;
          if (x > 0)
            diff += Math.abs(pixels[o]! - pixels[o - 3]!) + Math.abs(pixels[o + 2]! - pixels[o - 1]!);
        }
        rowSums.add(rowSum);
      }
      expect(colours.size).toBeGreaterThan(100); // not a flat fill
      expect(rowSums.size).toBeGreaterThan(h / 2); // varies from top to bottom
      expect(diff / (2 * h * (w - 1))).toBeLessThan(4); // not noise
    }
  });

  test("every filter type decodes to the same pixels", () => {
    const ref = decodePng(encodePng(97, 61, 4, { filter: 0 }));
    for (const filter of [1, 2, 3, 4] as const) {
      const png = decodePng(encodePng(97, 61, 4, { filter }));
      expect(png.filters.every((f) => f === filter)).toBe(true);
      expect(Buffer.from(png.pixels).equals(Buffer.from(ref.pixels))).toBe(true);
    }
    const rgba = decodePng(encodePng(97, 61, 4, { alpha: true, filter: 4 }));
    const rgbaRef = decodePng(encodePng(97, 61, 4, { alpha: true, filter: 0 }));
    expect(Buffer.from(rgba.pixels).equals(Buffer.from(rgbaRef.pixels))).toBe(true);
  });

  test("large images stream in several deflate bands and IDAT chunks and still decode", () => {
    // 1500 x 1000 RGB is 4.5 MB of scanlines (two 4 MiB bands); level 0 keeps it big enough
    // to be split over several 1 MiB IDAT chunks.
    const stored = decodePng(encodePng(1500, 1000, 3, { level: 0 }));
    expect(stored.chunks.filter((c) => c.type === "IDAT").length).toBeGreaterThan(4);
    const packed = decodePng(encodePng(1500, 1000, 3));
    expect(packed.raw.length).toBe(1000 * (1 + 1500 * 3));
    expect(Buffer.from(packed.pixels).equals(Buffer.from(stored.pixels))).toBe(true);
  });

  test("deterministic per seed; different seeds give different images", () => {
    const a = encodePng(120, 80, 42);
    expect(Buffer.from(encodePng(120, 80, 42)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(encodePng(120, 80, 43)).equals(Buffer.from(a))).toBe(false);
    expect(Buffer.from(encodePng(120, 80, "42")).equals(Buffer.from(a))).toBe(false);
    expect(Buffer.from(encodePng(120, 80, "a cat")).equals(Buffer.from(encodePng(120, 80, "a dog")))).toBe(
      false,
    );
  });

  test("1024x1024 encodes quickly", () => {
    encodePng(64, 64, 0);
    const t = performance.now();
    const bytes = encodePng(1024, 1024, "speed");
    const ms = performance.now() - t;
    expect(readPngSize(bytes)).toEqual({ width: 1024, height: 1024 });
    // Typically 20-60 ms; the bound is loose so a busy CI machine does not flake.
    expect(ms).toBeLessThan(1500);
  });

  test("bad arguments throw RangeError", () => {
    for (const [w, h] of [
      [0, 10],
      [10, 0],
      [-1, 10],
      [1.5, 10],
      [Number.NaN, 10],
      [10, Number.POSITIVE_INFINITY],
      [MAX_PNG_SIDE + 1, 1],
      [1, MAX_PNG_SIDE + 1],
    ]) {
      expect(() => encodePng(w!, h!, 1)).toThrow(RangeError);
    }
    expect(() => encodePng(10, 10, 1, { level: 10 })).toThrow(RangeError);
    expect(() => encodePng(10, 10, 1, { filter: 5 as 0 })).toThrow(RangeError);
  });
});

describe("readPngSize", () => {
  test("round-trips encoder output", () => {
    for (const [w, h] of [
      [1, 1],
      [640, 480],
      [3, 2000],
    ]) {
      expect(readPngSize(encodePng(w!, h!, 1))).toEqual({ width: w!, height: h! });
    }
    expect(readPngSize(encodePng(31, 17, 1, { alpha: true }))).toEqual({ width: 31, height: 17 });
  });

  test("works on a Buffer view into a larger ArrayBuffer", () => {
    const png = encodePng(12, 34, 5);
    const big = new Uint8Array(png.length + 100);
    big.set(png, 50);
    expect(readPngSize(big.subarray(50))).toEqual({ width: 12, height: 34 });
    expect(readPngSize(Buffer.from(png))).toEqual({ width: 12, height: 34 });
  });

  test("garbage, truncated and corrupted input give null", () => {
    const png = encodePng(64, 48, 1);
    for (let n = 0; n < 33; n++) expect(readPngSize(png.subarray(0, n))).toBeNull();
    expect(readPngSize(png.subarray(0, 33))).toEqual({ width: 64, height: 48 });
    const badCrc = png.slice();
    badCrc[18] = badCrc[18]! ^ 1; // width byte changed, CRC no longer matches
    expect(readPngSize(badCrc)).toBeNull();
    const badSig = png.slice();
    badSig[1] = 0;
    expect(readPngSize(badSig)).toBeNull();
    expect(readPngSize(new TextEncoder().encode("definitely not a png, just some text"))).toBeNull();
    expect(readPngSize(new Uint8Array(1000))).toBeNull();
    expect(readPngSize(null as unknown as Uint8Array)).toBeNull();
    expect(readPngSize("PNG" as unknown as Uint8Array)).toBeNull();
  });

  test("never throws on arbitrary bytes", () => {
    const header = encodePng(8, 8, 0).subarray(0, 40);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (tail, withHeader) => {
        const input = withHeader ? new Uint8Array([...header.subarray(0, tail.length % 41), ...tail]) : tail;
        const r = readPngSize(input);
        return r === null || (r.width > 0 && r.height > 0);
      }),
      { numRuns: 2000 },
    );
  });
});
