/**
 * Independent, deliberately plain decoders used to check the sandbox encoders' output. They
 * follow the PNG and WAV specifications directly and share no code with the encoders.
 */
import { crc32, inflateSync } from "node:zlib";

export function u32be(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

export function ascii(b: Uint8Array, o: number, n: number): string {
  return String.fromCharCode(...b.subarray(o, o + n));
}

export interface PngChunk {
  type: string;
  data: Uint8Array;
  crcOk: boolean;
}

export interface DecodedPng {
  chunks: PngChunk[];
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  bpp: number;
  /** Inflated IDAT stream (filter byte + filtered scanline per row). */
  raw: Uint8Array;
  filters: number[];
  /** Unfiltered pixels, row-major, bpp bytes per pixel. */
  pixels: Uint8Array;
}

export function decodePng(bytes: Uint8Array): DecodedPng {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  sig.forEach((v, i) => {
    if (bytes[i] !== v) throw new Error("bad PNG signature");
  });
  const chunks: PngChunk[] = [];
  let p = 8;
  while (p < bytes.length) {
    if (p + 12 > bytes.length) throw new Error("truncated chunk");
    const len = u32be(bytes, p);
    const type = ascii(bytes, p + 4, 4);
    if (p + 12 + len > bytes.length) throw new Error("truncated chunk data");
    const data = bytes.subarray(p + 8, p + 8 + len);
    const crc = u32be(bytes, p + 8 + len);
    chunks.push({ type, data, crcOk: crc32(bytes.subarray(p + 4, p + 8 + len)) >>> 0 === crc });
    p += 12 + len;
  }
  const ihdr = chunks[0];
  if (ihdr?.type !== "IHDR" || ihdr.data.length !== 13) throw new Error("IHDR must come first");
  const width = u32be(ihdr.data, 0);
  const height = u32be(ihdr.data, 4);
  const bitDepth = ihdr.data[8]!;
  const colorType = ihdr.data[9]!;
  const bpp = colorType === 2 ? 3 : colorType === 6 ? 4 : 0;
  if (bitDepth !== 8 || bpp === 0) throw new Error("unexpected pixel format");
  const idats = chunks.filter((c) => c.type === "IDAT");
  const first = chunks.findIndex((c) => c.type === "IDAT");
  if (chunks.slice(first, first + idats.length).some((c) => c.type !== "IDAT"))
    throw new Error("IDATs not consecutive");
  const z = new Uint8Array(idats.reduce((n, c) => n + c.data.length, 0));
  let o = 0;
  for (const c of idats) {
    z.set(c.data, o);
    o += c.data.length;
  }
  const raw = new Uint8Array(inflateSync(z)); // checks the zlib header and Adler-32
  const stride = width * bpp;
  const filters: number[] = [];
  const pixels = new Uint8Array(height * stride);
  if (raw.length === height * (stride + 1)) {
    for (let y = 0; y < height; y++) {
      const f = raw[y * (stride + 1)]!;
      filters.push(f);
      const src = y * (stride + 1) + 1;
      const dst = y * stride;
      for (let i = 0; i < stride; i++) {
        const a = i >= bpp ? pixels[dst + i - bpp]! : 0;
        const b = y > 0 ? pixels[dst - stride + i]! : 0;
        const c = y > 0 && i >= bpp ? pixels[dst - stride + i - bpp]! : 0;
        let pred = 0;
        if (f === 1) pred = a;
        else if (f === 2) pred = b;
        else if (f === 3) pred = (a + b) >> 1;
        else if (f === 4) {
          const pp = a + b - c;
          const pa = Math.abs(pp - a);
          const pb = Math.abs(pp - b);
          const pc = Math.abs(pp - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
        pixels[dst + i] = (raw[src + i]! + pred) & 255;
      }
    }
  }
  return { chunks, width, height, bitDepth, colorType, bpp, raw, filters, pixels };
}

export interface DecodedWav {
  riffSize: number;
  fmtSize: number;
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  dataSize: number;
  samples: Int16Array;
}

export function decodeWav(bytes: Uint8Array): DecodedWav {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (ascii(bytes, 0, 4) !== "RIFF" || ascii(bytes, 8, 4) !== "WAVE") throw new Error("not RIFF/WAVE");
  if (ascii(bytes, 12, 4) !== "fmt ") throw new Error("fmt chunk expected first");
  const fmtSize = dv.getUint32(16, true);
  const dataAt = 20 + fmtSize;
  if (ascii(bytes, dataAt, 4) !== "data") throw new Error("data chunk expected after fmt");
  const dataSize = dv.getUint32(dataAt + 4, true);
  const samples = new Int16Array(dataSize / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = dv.getInt16(dataAt + 8 + i * 2, true);
  return {
    riffSize: dv.getUint32(4, true),
    fmtSize,
    format: dv.getUint16(20, true),
    channels: dv.getUint16(22, true),
    sampleRate: dv.getUint32(24, true),
    byteRate: dv.getUint32(28, true),
    blockAlign: dv.getUint16(32, true),
    bitsPerSample: dv.getUint16(34, true),
    dataSize,
    samples,
  };
}
