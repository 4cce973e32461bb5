/**
 * Independent, deliberately plain decoders used to check the sandbox encoders' output. They
 * follow the PNG, WAV and GIF89a specifications directly and share no code with the encoders.
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

/**
 * GIF LZW decoder written from the GIF89a specification (appendix F): codes are read LSB
 * first; the code width grows when the next free table slot reaches 2^width (up to 12 bits).
 */
export function lzwDecode(data: Uint8Array, minCodeSize: number, expected?: number): Uint8Array {
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  const prefix = new Int32Array(4096);
  const suffix = new Uint8Array(4096);
  const length = new Int32Array(4096);
  for (let i = 0; i < clear; i++) {
    prefix[i] = -1;
    suffix[i] = i;
    length[i] = 1;
  }
  const out: number[] = [];
  let size = minCodeSize + 1;
  let next = eoi + 1;
  let old = -1;
  let bitPos = 0;
  let sawClearFirst = false;
  const firstOf = (code: number): number => {
    let c = code;
    while (prefix[c]! >= 0) c = prefix[c]!;
    return suffix[c]!;
  };
  const emit = (code: number): void => {
    const n = length[code]!;
    const start = out.length;
    for (let i = 0; i < n; i++) out.push(0);
    let c = code;
    for (let i = n - 1; i >= 0; i--) {
      out[start + i] = suffix[c]!;
      c = prefix[c]!;
    }
  };
  for (;;) {
    if (bitPos + size > data.length * 8) throw new Error("LZW stream ended without end-of-information code");
    let code = 0;
    for (let i = 0; i < size; i++, bitPos++) {
      if ((data[bitPos >> 3]! >> (bitPos & 7)) & 1) code |= 1 << i;
    }
    if (!sawClearFirst) {
      if (code !== clear) throw new Error("LZW stream must start with a clear code");
      sawClearFirst = true;
    }
    if (code === clear) {
      size = minCodeSize + 1;
      next = eoi + 1;
      old = -1;
      continue;
    }
    if (code === eoi) break;
    if (old === -1) {
      if (code >= clear) throw new Error(`first code after clear must be a literal, got ${code}`);
      emit(code);
      old = code;
      continue;
    }
    let k: number;
    if (code < next) {
      emit(code);
      k = firstOf(code);
    } else if (code === next) {
      k = firstOf(old);
      emit(old);
      out.push(k);
    } else {
      throw new Error(`LZW code ${code} beyond table (${next})`);
    }
    if (next < 4096) {
      prefix[next] = old;
      suffix[next] = k;
      length[next] = length[old]! + 1;
      next++;
      if (next === 1 << size && size < 12) size++;
    }
    old = code;
    if (expected !== undefined && out.length > expected) throw new Error("LZW stream longer than expected");
  }
  // Everything after the end code must be padding inside the last byte.
  if (Math.ceil(bitPos / 8) !== data.length) throw new Error("bytes left after end-of-information code");
  return Uint8Array.from(out);
}

export interface DecodedGifFrame {
  left: number;
  top: number;
  width: number;
  height: number;
  delayCs: number;
  disposal: number;
  transparent: number;
  indices: Uint8Array;
}

export interface DecodedGif {
  version: string;
  width: number;
  height: number;
  palette: Uint8Array;
  loop: number | null;
  frames: DecodedGifFrame[];
}

function readSubBlocks(b: Uint8Array, start: number): { data: Uint8Array; end: number } {
  const parts: number[] = [];
  let p = start;
  for (;;) {
    const n = b[p];
    if (n === undefined) throw new Error("truncated sub-blocks");
    p++;
    if (n === 0) break;
    if (p + n > b.length) throw new Error("truncated sub-block");
    for (let i = 0; i < n; i++) parts.push(b[p + i]!);
    p += n;
  }
  return { data: Uint8Array.from(parts), end: p };
}

export function decodeGif(b: Uint8Array): DecodedGif {
  const version = ascii(b, 0, 6);
  if (version !== "GIF89a" && version !== "GIF87a") throw new Error("bad GIF header");
  const width = b[6]! | (b[7]! << 8);
  const height = b[8]! | (b[9]! << 8);
  const packed = b[10]!;
  let p = 13;
  let palette = new Uint8Array(0);
  if (packed & 0x80) {
    const n = 2 << (packed & 7);
    palette = b.slice(p, p + n * 3);
    p += n * 3;
  }
  let loop: number | null = null;
  const frames: DecodedGifFrame[] = [];
  let gce = { delayCs: 0, disposal: 0, transparent: -1 };
  for (;;) {
    const intro = b[p++];
    if (intro === 0x3b) break;
    if (intro === 0x21) {
      const label = b[p++];
      if (label === 0xf9) {
        if (b[p] !== 4) throw new Error("bad GCE size");
        const flags = b[p + 1]!;
        gce = {
          delayCs: b[p + 2]! | (b[p + 3]! << 8),
          disposal: (flags >> 2) & 7,
          transparent: flags & 1 ? b[p + 4]! : -1,
        };
        if (b[p + 5] !== 0) throw new Error("GCE terminator missing");
        p += 6;
      } else if (label === 0xff) {
        const blockSize = b[p]!;
        const id = ascii(b, p + 1, blockSize);
        const sub = readSubBlocks(b, p + 1 + blockSize);
        if (id === "NETSCAPE2.0" && sub.data[0] === 1) loop = sub.data[1]! | (sub.data[2]! << 8);
        p = sub.end;
      } else {
        p = readSubBlocks(b, p).end;
      }
      continue;
    }
    if (intro !== 0x2c) throw new Error(`unexpected block 0x${(intro ?? -1).toString(16)} at ${p - 1}`);
    const left = b[p]! | (b[p + 1]! << 8);
    const top = b[p + 2]! | (b[p + 3]! << 8);
    const fw = b[p + 4]! | (b[p + 5]! << 8);
    const fh = b[p + 6]! | (b[p + 7]! << 8);
    const flags = b[p + 8]!;
    if (flags & 0x80) throw new Error("local colour tables not expected");
    if (flags & 0x40) throw new Error("interlace not expected");
    p += 9;
    const minCodeSize = b[p++]!;
    const sub = readSubBlocks(b, p);
    p = sub.end;
    const indices = lzwDecode(sub.data, minCodeSize, fw * fh);
    frames.push({ left, top, width: fw, height: fh, ...gce, indices });
    gce = { delayCs: 0, disposal: 0, transparent: -1 };
  }
  if (p !== b.length) throw new Error("bytes after trailer");
  return { version, width, height, palette, loop, frames };
}

/** Composites frames (disposal 0/1, transparency) and returns the canvas after each frame. */
export function compositeGif(gif: DecodedGif): Uint8Array[] {
  const canvas = new Uint8Array(gif.width * gif.height);
  const out: Uint8Array[] = [];
  for (const f of gif.frames) {
    if (f.disposal > 1) throw new Error("only disposal 0/1 supported here");
    for (let y = 0; y < f.height; y++) {
      for (let x = 0; x < f.width; x++) {
        const v = f.indices[y * f.width + x]!;
        if (v !== f.transparent) canvas[(f.top + y) * gif.width + f.left + x] = v;
      }
    }
    out.push(canvas.slice());
  }
  return out;
}
