/**
 * Minimal GIF89a writer: global 256-colour palette, NETSCAPE2.0 looping, per-frame Graphic
 * Control Extension (delay, disposal, transparency) and a variable-width LZW encoder.
 */

/** Growable byte buffer. */
export class ByteWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(initial = 1 << 16) {
    this.buf = new Uint8Array(initial);
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }

  u16le(v: number): void {
    this.ensure(2);
    this.buf[this.length++] = v & 255;
    this.buf[this.length++] = (v >>> 8) & 255;
  }

  bytes(b: Uint8Array | readonly number[]): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  ascii(s: string): void {
    this.ensure(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.length++] = s.charCodeAt(i) & 255;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

const MAX_CODES = 4096;
const HASH_SIZE = 1 << 14;

/**
 * GIF-flavoured LZW: LSB-first variable-width codes starting at minCodeSize + 1 bits, a clear
 * code first, a code-width increase as soon as the next code to assign needs another bit, a
 * clear code (and a reset) when the 4096-entry table is full, and an end-of-information code.
 * Returns the packed code stream without the sub-block framing (see writeSubBlocks).
 */
export function lzwEncode(indices: Uint8Array, minCodeSize: number): Uint8Array {
  if (!Number.isInteger(minCodeSize) || minCodeSize < 2 || minCodeSize > 8) {
    throw new RangeError(`minCodeSize must be 2..8, got ${minCodeSize}`);
  }
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  const out = new ByteWriter(Math.max(256, indices.length >> 1));
  const keys = new Int32Array(HASH_SIZE).fill(-1);
  const codes = new Uint16Array(HASH_SIZE);
  let codeSize = minCodeSize + 1;
  let next = eoi + 1;
  let acc = 0;
  let accBits = 0;

  const emit = (code: number): void => {
    acc |= code << accBits;
    accBits += codeSize;
    while (accBits >= 8) {
      out.byte(acc & 255);
      acc >>>= 8;
      accBits -= 8;
    }
  };

  emit(clear);
  if (indices.length === 0) {
    emit(eoi);
    if (accBits > 0) out.byte(acc & 255);
    return out.result();
  }
  const limit = clear - 1;
  let prefix = indices[0]!;
  if (prefix > limit) throw new RangeError(`index ${prefix} does not fit ${minCodeSize} bits`);
  for (let i = 1; i < indices.length; i++) {
    const c = indices[i]!;
    if (c > limit) throw new RangeError(`index ${c} does not fit ${minCodeSize} bits`);
    const key = (prefix << 8) | c;
    let h = Math.imul(key, 0x9e3779b1) >>> 18;
    let found = -1;
    while (true) {
      const k = keys[h]!;
      if (k === -1) break;
      if (k === key) {
        found = codes[h]!;
        break;
      }
      h = (h + 1) & (HASH_SIZE - 1);
    }
    if (found >= 0) {
      prefix = found;
      continue;
    }
    emit(prefix);
    if (next === MAX_CODES) {
      emit(clear);
      keys.fill(-1);
      codeSize = minCodeSize + 1;
      next = eoi + 1;
    } else {
      if (next >= 1 << codeSize) codeSize++;
      keys[h] = key;
      codes[h] = next++;
    }
    prefix = c;
  }
  emit(prefix);
  // The decoder adds a table entry after this code; if that entry needs a wider code, so does
  // the end-of-information code that follows.
  if (next < MAX_CODES && next >= 1 << codeSize) codeSize++;
  emit(eoi);
  if (accBits > 0) out.byte(acc & 255);
  return out.result();
}

/** GIF data sub-blocks: runs of at most 255 bytes, each preceded by its length, then a 0. */
export function writeSubBlocks(w: ByteWriter, data: Uint8Array): void {
  for (let i = 0; i < data.length; i += 255) {
    const n = Math.min(255, data.length - i);
    w.byte(n);
    w.bytes(data.subarray(i, i + n));
  }
  w.byte(0);
}

export interface GifFrame {
  left: number;
  top: number;
  width: number;
  height: number;
  /** Palette indices, width x height, row-major. */
  indices: Uint8Array;
  /** Delay after this frame, in centiseconds. */
  delayCs: number;
  /** Palette index treated as transparent, or -1. */
  transparent: number;
}

/** Streams a looping GIF89a with a 256-entry global palette. */
export class GifWriter {
  private readonly w = new ByteWriter(1 << 18);

  constructor(
    readonly width: number,
    readonly height: number,
    palette: Uint8Array,
    comment?: string,
  ) {
    if (palette.length !== 768) throw new RangeError("palette must hold 256 RGB entries");
    const w = this.w;
    w.ascii("GIF89a");
    w.u16le(width);
    w.u16le(height);
    w.byte(0xf7); // global colour table, 8-bit colour resolution, 256 entries
    w.byte(0); // background colour index
    w.byte(0); // no pixel aspect ratio
    w.bytes(palette);
    // NETSCAPE2.0 application extension: loop forever.
    w.bytes([0x21, 0xff, 0x0b]);
    w.ascii("NETSCAPE2.0");
    w.bytes([0x03, 0x01, 0x00, 0x00, 0x00]);
    if (comment) {
      w.bytes([0x21, 0xfe]);
      const text = new Uint8Array(comment.length);
      for (let i = 0; i < comment.length; i++) text[i] = comment.charCodeAt(i) & 0x7f;
      writeSubBlocks(w, text);
    }
  }

  addFrame(f: GifFrame): void {
    const w = this.w;
    if (f.indices.length !== f.width * f.height) throw new RangeError("frame indices do not match its size");
    if (f.left + f.width > this.width || f.top + f.height > this.height)
      throw new RangeError("frame outside screen");
    // Graphic Control Extension: disposal 1 (leave in place), optional transparency.
    w.bytes([0x21, 0xf9, 0x04, (1 << 2) | (f.transparent >= 0 ? 1 : 0)]);
    w.u16le(f.delayCs);
    w.byte(f.transparent >= 0 ? f.transparent : 0);
    w.byte(0);
    // Image descriptor, no local colour table, not interlaced.
    w.byte(0x2c);
    w.u16le(f.left);
    w.u16le(f.top);
    w.u16le(f.width);
    w.u16le(f.height);
    w.byte(0);
    w.byte(8); // LZW minimum code size
    writeSubBlocks(w, lzwEncode(f.indices, 8));
  }

  finish(): Uint8Array {
    this.w.byte(0x3b);
    return this.w.result();
  }
}
