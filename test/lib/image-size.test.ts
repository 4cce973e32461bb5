import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { sniffImageSize } from "../../src/lib/image-size.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { gif } from "../providers/media-fixtures.ts";

const bytes = (...parts: (number[] | string)[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
const le16 = (v: number) => [v & 255, v >> 8];
const le24 = (v: number) => [v & 255, (v >> 8) & 255, v >> 16];
const le32 = (v: number) => [v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >>> 24) & 255];
const be16 = (v: number) => [v >> 8, v & 255];

/** A minimal JPEG header: SOI, APP0 (JFIF), DQT, then a SOFn frame header. */
function jpeg(width: number, height: number, sof = 0xc0): Uint8Array {
  const app0 = [
    0xff,
    0xe0,
    ...be16(16),
    ..."JFIF\0".split("").map((c) => c.charCodeAt(0)),
    1,
    1,
    0,
    0,
    1,
    0,
    1,
    0,
    0,
  ];
  const dqt = [0xff, 0xdb, ...be16(67), 0, ...new Array(64).fill(1)];
  const frame = [
    0xff,
    sof,
    ...be16(17),
    8,
    ...be16(height),
    ...be16(width),
    3,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ];
  return bytes([0xff, 0xd8], app0, [0xff, 0xff], dqt, frame, [0xff, 0xda, 0, 12]);
}

describe("sniffImageSize", () => {
  test("PNG from the sandbox encoder, GIF from the test fixture", () => {
    expect(sniffImageSize(encodePng(123, 45, 1))).toEqual({ format: "png", width: 123, height: 45 });
    expect(sniffImageSize(gif(480, 270, [10, 10]))).toEqual({ format: "gif", width: 480, height: 270 });
  });

  test("JPEG: baseline and progressive frame headers, fill bytes, segments skipped", () => {
    expect(sniffImageSize(jpeg(640, 480))).toEqual({ format: "jpeg", width: 640, height: 480 });
    expect(sniffImageSize(jpeg(4000, 3000, 0xc2))).toEqual({ format: "jpeg", width: 4000, height: 3000 });
    // DHT (0xC4) is not a frame header even though it is in the SOF range.
    const dht = bytes([0xff, 0xd8, 0xff, 0xc4, 0, 5, 1, 2, 3], [...jpeg(10, 20)].slice(2));
    expect(sniffImageSize(dht)).toEqual({ format: "jpeg", width: 10, height: 20 });
  });

  test("WebP: lossy, lossless and extended", () => {
    const vp8 = bytes(
      "RIFF",
      le32(30),
      "WEBP",
      "VP8 ",
      le32(10),
      [0, 0, 0, 0x9d, 0x01, 0x2a],
      le16(800),
      le16(600),
    );
    expect(sniffImageSize(vp8)).toEqual({ format: "webp", width: 800, height: 600 });
    const w = 1000;
    const h = 750;
    const bits = (w - 1) | ((h - 1) << 14);
    const vp8l = bytes("RIFF", le32(30), "WEBP", "VP8L", le32(5), [0x2f], le32(bits));
    expect(sniffImageSize(vp8l)).toEqual({ format: "webp", width: 1000, height: 750 });
    const vp8x = bytes("RIFF", le32(30), "WEBP", "VP8X", le32(10), [0, 0, 0, 0], le24(4095), le24(2047));
    expect(sniffImageSize(vp8x)).toEqual({ format: "webp", width: 4096, height: 2048 });
  });

  test("BMP: bottom-up and top-down", () => {
    const bmp = (w: number, h: number) =>
      bytes("BM", le32(0), le32(0), le32(54), le32(40), le32(w), le32(h), le16(1), le16(24));
    expect(sniffImageSize(bmp(300, 200))).toEqual({ format: "bmp", width: 300, height: 200 });
    expect(sniffImageSize(bmp(300, -200))).toEqual({ format: "bmp", width: 300, height: 200 });
    expect(sniffImageSize(bmp(-1, 200))).toBeNull();
  });

  test("garbage and truncated headers give null", () => {
    expect(sniffImageSize(new Uint8Array(0))).toBeNull();
    expect(sniffImageSize(new TextEncoder().encode("hello world, not an image"))).toBeNull();
    const j = jpeg(640, 480);
    // The SOF0 segment (19 bytes) sits just before the 4-byte SOS stub; its width ends 9 bytes in.
    const widthEnd = j.length - 4 - 19 + 9;
    for (let n = 0; n < widthEnd; n++) expect(sniffImageSize(j.subarray(0, n))).toBeNull();
    expect(sniffImageSize(j.subarray(0, widthEnd))).toEqual({ format: "jpeg", width: 640, height: 480 });
    expect(sniffImageSize(bytes([0xff, 0xd8, 0xff, 0xd9], new Array(20).fill(0)))).toBeNull();
    expect(sniffImageSize(bytes("GIF89a", [0, 0, 0, 0, 0]))).toBeNull();
    expect(sniffImageSize(bytes("RIFF", le32(4), "WEBP", "XXXX", le32(0)))).toBeNull();
    expect(sniffImageSize(undefined as unknown as Uint8Array)).toBeNull();
  });

  test("never throws on arbitrary bytes after a valid-looking magic", () => {
    const magics = [
      [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
      [0xff, 0xd8],
      [...Buffer.from("GIF89a")],
      [...Buffer.from("RIFF\0\0\0\0WEBPVP8 ")],
      [...Buffer.from("BM")],
      [],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...magics), fc.uint8Array({ maxLength: 80 }), (magic, tail) => {
        const r = sniffImageSize(Uint8Array.from([...magic, ...tail]));
        return r === null || (r.width >= 1 && r.height >= 1);
      }),
      { numRuns: 3000 },
    );
  });
});
