import { crc32 } from "node:zlib";
import { ascii } from "./bytes.ts";

export const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

export type ImageFormat = "png" | "jpeg" | "gif" | "webp" | "bmp";

export interface ImageSize {
  format: ImageFormat;
  width: number;
  height: number;
}

/**
 * Pixel dimensions of a PNG, JPEG, GIF, WebP or BMP file read from its header alone (no
 * decoding), or null when the bytes are none of these or are truncated or malformed. Never
 * throws. JPEG dimensions are the stored ones (an EXIF rotation does not change the pixel count).
 */
export function sniffImageSize(bytes: Uint8Array): ImageSize | null {
  try {
    if (!(bytes instanceof Uint8Array) || bytes.length < 10) return null;
    const b0 = bytes[0];
    let r: { width: number; height: number } | null = null;
    let format: ImageFormat;
    if (b0 === 0x89) {
      format = "png";
      r = readPngSize(bytes);
    } else if (b0 === 0xff && bytes[1] === 0xd8) {
      format = "jpeg";
      r = jpegSize(bytes);
    } else if (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a") {
      format = "gif";
      r = { width: u16le(bytes, 6), height: u16le(bytes, 8) };
    } else if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") {
      format = "webp";
      r = webpSize(bytes);
    } else if (ascii(bytes, 0, 2) === "BM") {
      format = "bmp";
      r = bmpSize(bytes);
    } else {
      return null;
    }
    if (!r || !(r.width >= 1) || !(r.height >= 1)) return null;
    return { format, width: r.width, height: r.height };
  } catch {
    return null;
  }
}

function u16le(b: Uint8Array, o: number): number {
  if (o + 2 > b.length) throw new RangeError("truncated");
  return b[o]! | (b[o + 1]! << 8);
}

function u16be(b: Uint8Array, o: number): number {
  if (o + 2 > b.length) throw new RangeError("truncated");
  return (b[o]! << 8) | b[o + 1]!;
}

function u24le(b: Uint8Array, o: number): number {
  if (o + 3 > b.length) throw new RangeError("truncated");
  return b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16);
}

function i32le(b: Uint8Array, o: number): number {
  if (o + 4 > b.length) throw new RangeError("truncated");
  return b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24);
}

/** Walks the marker segments up to the first SOFn frame header. */
function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let p = 2;
  while (p + 4 <= b.length) {
    if (b[p] !== 0xff) return null;
    while (b[p] === 0xff && p < b.length) p++; // fill bytes
    const m = b[p];
    p++;
    if (m === undefined) return null;
    if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) continue; // no length
    if (m === 0xd9 || m === 0xda) return null; // end of image / scan before any frame header
    const len = u16be(b, p);
    if (len < 2) return null;
    const isSof = m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
    if (isSof) {
      if (len < 7 || p + 7 > b.length) return null;
      return { height: u16be(b, p + 3), width: u16be(b, p + 5) };
    }
    p += len;
  }
  return null;
}

function webpSize(b: Uint8Array): { width: number; height: number } | null {
  const fourcc = ascii(b, 12, 4);
  const d = 20;
  if (fourcc === "VP8 ") {
    if (b[d + 3] !== 0x9d || b[d + 4] !== 0x01 || b[d + 5] !== 0x2a) return null;
    return { width: u16le(b, d + 6) & 0x3fff, height: u16le(b, d + 8) & 0x3fff };
  }
  if (fourcc === "VP8L") {
    if (b[d] !== 0x2f || d + 5 > b.length) return null;
    const bits = (b[d + 1]! | (b[d + 2]! << 8) | (b[d + 3]! << 16) | (b[d + 4]! << 24)) >>> 0;
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (fourcc === "VP8X") {
    return { width: u24le(b, d + 4) + 1, height: u24le(b, d + 7) + 1 };
  }
  return null;
}

function bmpSize(b: Uint8Array): { width: number; height: number } | null {
  const header = i32le(b, 14);
  if (header === 12) return { width: u16le(b, 18), height: u16le(b, 20) };
  if (header < 40) return null;
  return { width: i32le(b, 18), height: Math.abs(i32le(b, 22)) };
}

/** Width and height from a PNG's IHDR, or null when the bytes are not a PNG with a valid IHDR. */
export function readPngSize(bytes: Uint8Array): { width: number; height: number } | null {
  try {
    if (!(bytes instanceof Uint8Array) || bytes.length < 33) return null;
    for (let i = 0; i < 8; i++) if (bytes[i] !== PNG_SIGNATURE[i]) return null;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, 33);
    if (dv.getUint32(8) !== 13) return null;
    if (bytes[12] !== 0x49 || bytes[13] !== 0x48 || bytes[14] !== 0x44 || bytes[15] !== 0x52) return null;
    if (crc32(bytes.subarray(12, 29)) >>> 0 !== dv.getUint32(29)) return null;
    const width = dv.getUint32(16);
    const height = dv.getUint32(20);
    if (width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff) return null;
    return { width, height };
  } catch {
    return null;
  }
}
