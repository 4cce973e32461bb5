import { describe, expect, test } from "bun:test";
import {
  BoolEncoder,
  fdct4x4,
  fwht4x4,
  idct4x4Add,
  iwht4x4,
  Vp8Encoder,
  type Yuv420Frame,
} from "../../../../src/providers/sandbox/media/vp8.ts";
import {
  AC_QLOOKUP,
  CAT_PROBS,
  COEF_BANDS,
  COEF_UPDATE_PROBS,
  DC_QLOOKUP,
  DEFAULT_COEF_PROBS,
  MODE_CONTEXT_ZERO,
  MV_UPDATE_PROBS,
  ZIGZAG,
} from "../../../../src/providers/sandbox/media/vp8-tables.ts";

/** Boolean decoder written from RFC 6386 section 7.3 (shares nothing with the encoder). */
class BoolDecoder {
  private value: number;
  private range = 255;
  private bitCount = 0;
  private at = 2;
  constructor(private readonly data: Uint8Array) {
    this.value = ((data[0] ?? 0) << 8) | (data[1] ?? 0);
  }
  read(prob: number): number {
    const split = 1 + (((this.range - 1) * prob) >> 8);
    const SPLIT = split << 8;
    let bit: number;
    if (this.value >= SPLIT) {
      bit = 1;
      this.range -= split;
      this.value -= SPLIT;
    } else {
      bit = 0;
      this.range = split;
    }
    while (this.range < 128) {
      this.value <<= 1;
      this.range <<= 1;
      if (++this.bitCount === 8) {
        this.bitCount = 0;
        this.value |= this.data[this.at++] ?? 0;
      }
    }
    return bit;
  }
  literal(bits: number): number {
    let v = 0;
    for (let i = 0; i < bits; i++) v = (v << 1) | this.read(128);
    return v;
  }
}

/** Deterministic pseudo-random numbers for the tests. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("boolean entropy coder", () => {
  test.each([1, 2, 3, 4])("random bits at random probabilities round-trip (seed %i)", (seed) => {
    const r = rng(seed);
    const bits: number[] = [];
    const probs: number[] = [];
    const enc = new BoolEncoder(16);
    for (let i = 0; i < 20_000; i++) {
      const p = 1 + Math.floor(r() * 255);
      // Mostly bits that agree with the probability (as real data), some that do not.
      const bit = r() < (r() < 0.8 ? 1 - p / 256 : 0.5) ? 1 : 0;
      bits.push(bit);
      probs.push(p);
      enc.put(bit, p);
    }
    const data = enc.finish();
    const dec = new BoolDecoder(data);
    const got = probs.map((p) => dec.read(p));
    expect(got).toEqual(bits);
    // Compression: skewed bits cost far less than a bit each.
    expect(data.length).toBeLessThan(20_000 / 8);
  });

  test("extreme probabilities and long runs of carries", () => {
    for (const [bit, p] of [
      [1, 1],
      [0, 255],
      [1, 255],
      [0, 1],
      [1, 128],
    ] as const) {
      const enc = new BoolEncoder(4);
      for (let i = 0; i < 5000; i++) enc.put(bit, p);
      const dec = new BoolDecoder(enc.finish());
      for (let i = 0; i < 5000; i++) expect(dec.read(p)).toBe(bit);
    }
  });

  test("literals are most significant bit first at probability 1/2", () => {
    const enc = new BoolEncoder();
    enc.literal(0x5a, 7);
    enc.literal(3, 2);
    enc.literal(1234, 11);
    const dec = new BoolDecoder(enc.finish());
    expect([dec.literal(7), dec.literal(2), dec.literal(11)]).toEqual([0x5a, 3, 1234]);
  });
});

describe("tables (RFC 6386)", () => {
  test("sizes", () => {
    expect(DEFAULT_COEF_PROBS.length).toBe(4 * 8 * 3 * 11);
    expect(COEF_UPDATE_PROBS.length).toBe(4 * 8 * 3 * 11);
    expect(DC_QLOOKUP.length).toBe(128);
    expect(AC_QLOOKUP.length).toBe(128);
    expect(MV_UPDATE_PROBS.length).toBe(38);
    expect(MODE_CONTEXT_ZERO.length).toBe(6);
    expect(CAT_PROBS.map((c) => c.length)).toEqual([3, 4, 5, 11]);
    expect([...ZIGZAG].sort((a, b) => a - b)).toEqual([...Array(16).keys()]);
    expect(COEF_BANDS.length).toBe(16);
  });

  test("known entries", () => {
    const at = (t: number, b: number, c: number, n: number) =>
      DEFAULT_COEF_PROBS[((t * 8 + b) * 3 + c) * 11 + n];
    expect(at(0, 0, 0, 0)).toBe(128); // type 0 band 0 is never used: all 128
    expect(at(0, 1, 0, 0)).toBe(253);
    expect(at(1, 0, 0, 10)).toBe(62);
    expect(at(1, 0, 1, 10)).toBe(1);
    expect(at(2, 0, 0, 1)).toBe(9);
    expect(at(2, 7, 2, 0)).toBe(128);
    expect(at(3, 0, 2, 0)).toBe(61);
    expect(at(3, 7, 2, 0)).toBe(238);
    const up = (t: number, b: number, c: number, n: number) =>
      COEF_UPDATE_PROBS[((t * 8 + b) * 3 + c) * 11 + n];
    expect(up(0, 1, 0, 0)).toBe(176);
    expect(up(1, 0, 0, 0)).toBe(217);
    expect(up(3, 0, 2, 2)).toBe(249);
    // Every probability is a valid 8-bit probability (1..255).
    for (const t of [DEFAULT_COEF_PROBS, COEF_UPDATE_PROBS, MV_UPDATE_PROBS, MODE_CONTEXT_ZERO])
      for (const p of t) expect(p >= 1 && p <= 255).toBe(true);
    expect([DC_QLOOKUP[0], DC_QLOOKUP[127], AC_QLOOKUP[0], AC_QLOOKUP[127]]).toEqual([4, 157, 4, 284]);
    for (let i = 1; i < 128; i++) {
      expect(DC_QLOOKUP[i]!).toBeGreaterThanOrEqual(DC_QLOOKUP[i - 1]!);
      expect(AC_QLOOKUP[i]!).toBeGreaterThan(AC_QLOOKUP[i - 1]!);
    }
    expect([...MODE_CONTEXT_ZERO]).toEqual([7, 14, 135, 60, 159, 234]);
  });
});

describe("transforms", () => {
  test("inverse DCT of the forward DCT gives the residual back (within rounding)", () => {
    const r = rng(9);
    const res = new Int32Array(16);
    const coef = new Int32Array(16);
    const zero = new Uint8Array(16).fill(128);
    const out = new Uint8Array(16);
    for (let k = 0; k < 500; k++) {
      for (let i = 0; i < 16; i++) res[i] = Math.floor(r() * 256) - 128;
      fdct4x4(res, coef);
      idct4x4Add(coef, zero, 0, 4, out, 0, 4);
      for (let i = 0; i < 16; i++) expect(Math.abs(out[i]! - 128 - res[i]!)).toBeLessThanOrEqual(1);
    }
  });

  test("a flat block is all DC (libvpx's rounding biases leave at most 1 elsewhere)", () => {
    const coef = new Int32Array(16);
    fdct4x4(new Int32Array(16).fill(10), coef);
    expect(coef[0]).toBe(80);
    expect([...coef.subarray(1)].every((v) => Math.abs(v) <= 1)).toBe(true);
  });

  test("inverse WHT of the forward WHT gives the DC values back (within rounding)", () => {
    const r = rng(11);
    const dc = new Int32Array(16);
    const w = new Int32Array(16);
    const back = new Int32Array(16);
    for (let k = 0; k < 500; k++) {
      for (let i = 0; i < 16; i++) dc[i] = Math.floor(r() * 4000) - 2000;
      fwht4x4(dc, w);
      iwht4x4(w, back);
      for (let i = 0; i < 16; i++) expect(Math.abs(back[i]! - dc[i]!)).toBeLessThanOrEqual(1);
    }
  });
});

function gradientFrame(w: number, h: number, shift: number): Yuv420Frame {
  const cw = (w + 1) >> 1;
  const ch = (h + 1) >> 1;
  const f = {
    width: w,
    height: h,
    y: new Uint8Array(w * h),
    u: new Uint8Array(cw * ch),
    v: new Uint8Array(cw * ch),
  };
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      f.y[y * w + x] = 16 + ((x * 3 + y * 2 + shift) % 200) + (((x >> 3) + (y >> 3)) & 1) * 20;
  for (let y = 0; y < ch; y++)
    for (let x = 0; x < cw; x++) {
      f.u[y * cw + x] = 90 + ((x + shift) % 60);
      f.v[y * cw + x] = 160 - (y % 50);
    }
  return f;
}

function lumaPsnr(enc: Vp8Encoder, f: Yuv420Frame): number {
  let se = 0;
  for (let y = 0; y < f.height; y++)
    for (let x = 0; x < f.width; x++) {
      const d = enc.recon.y[y * enc.yStride + x]! - f.y[y * f.width + x]!;
      se += d * d;
    }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * f.width * f.height) / se);
}

describe("Vp8Encoder", () => {
  test("key frame header: frame tag, start code, size; first partition size fits", () => {
    const enc = new Vp8Encoder(99, 37);
    const { bytes, key } = enc.encode(gradientFrame(99, 37, 0));
    expect(key).toBe(true);
    const tag = bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16);
    expect(tag & 1).toBe(0); // key frame
    expect((tag >> 1) & 7).toBe(0); // version 0
    expect((tag >> 4) & 1).toBe(1); // shown
    const first = tag >> 5;
    expect(10 + first).toBeLessThan(bytes.length);
    expect([...bytes.subarray(3, 6)]).toEqual([0x9d, 0x01, 0x2a]);
    expect(bytes[6]! | (bytes[7]! << 8)).toBe(99);
    expect(bytes[8]! | (bytes[9]! << 8)).toBe(37);
    // The first partition starts with the key frame header fields (RFC 6386 section 19.2).
    const d = new BoolDecoder(bytes.subarray(10, 10 + first));
    expect(d.literal(1)).toBe(0); // colour space
    expect(d.literal(1)).toBe(0); // clamping
    expect(d.literal(1)).toBe(0); // segmentation
    expect(d.literal(1)).toBe(0); // filter type
    expect(d.literal(6)).toBe(0); // loop filter level
    expect(d.literal(3)).toBe(0); // sharpness
    expect(d.literal(1)).toBe(0); // lf deltas
    expect(d.literal(2)).toBe(0); // partitions
    expect(d.literal(7)).toBe(10); // quantizer index
    for (let i = 0; i < 5; i++) expect(d.literal(1)).toBe(0);
    expect(d.literal(1)).toBe(1); // refresh entropy probs
    for (let i = 0; i < COEF_UPDATE_PROBS.length; i++) expect(d.read(COEF_UPDATE_PROBS[i]!)).toBe(0);
    expect(d.literal(1)).toBe(1); // skip flags present
  });

  test("reconstruction is close to the source, and better at a lower quantizer", () => {
    const f = gradientFrame(64, 48, 3);
    const fine = new Vp8Encoder(64, 48, { qIndex: 4 });
    const coarse = new Vp8Encoder(64, 48, { qIndex: 60 });
    const a = fine.encode(f);
    const b = coarse.encode(f);
    const pa = lumaPsnr(fine, f);
    const pb = lumaPsnr(coarse, f);
    expect(pa).toBeGreaterThan(38);
    expect(pb).toBeGreaterThan(25);
    expect(pa).toBeGreaterThan(pb);
    expect(a.bytes.length).toBeGreaterThan(b.bytes.length);
  });

  test("inter frames: an unchanged frame costs a few bytes and keeps the picture", () => {
    const enc = new Vp8Encoder(160, 96);
    const f = gradientFrame(160, 96, 5);
    const key = enc.encode(f);
    const before = enc.recon.y.slice();
    const same = enc.encode(f);
    expect(same.key).toBe(false);
    expect(same.bytes[0]! & 1).toBe(1); // inter frame tag
    expect(same.bytes.length).toBeLessThan(key.bytes.length / 20);
    expect(Buffer.from(enc.recon.y).equals(Buffer.from(before))).toBe(true);
    // A changed frame is coded (larger) and reconstructed close to its source.
    const moved = gradientFrame(160, 96, 40);
    const next = enc.encode(moved);
    expect(next.bytes.length).toBeGreaterThan(same.bytes.length);
    expect(lumaPsnr(enc, moved)).toBeGreaterThan(35);
    expect(enc.encode(moved, true).key).toBe(true);
  });

  test("deterministic", () => {
    const f = gradientFrame(50, 30, 1);
    const a = new Vp8Encoder(50, 30).encode(f).bytes;
    const b = new Vp8Encoder(50, 30).encode(f).bytes;
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  test("bad sizes, quantizers and frames are refused", () => {
    expect(() => new Vp8Encoder(0, 10)).toThrow(RangeError);
    expect(() => new Vp8Encoder(10, 16384)).toThrow(RangeError);
    expect(() => new Vp8Encoder(10.5, 10)).toThrow(RangeError);
    expect(() => new Vp8Encoder(10, 10, { qIndex: 128 })).toThrow(RangeError);
    expect(() => new Vp8Encoder(10, 10, { qIndex: -1 })).toThrow(RangeError);
    expect(() => new Vp8Encoder(10, 10).encode(gradientFrame(12, 10, 0))).toThrow(RangeError);
    const short = { ...gradientFrame(10, 10, 0), y: new Uint8Array(10) };
    expect(() => new Vp8Encoder(10, 10).encode(short)).toThrow(RangeError);
  });
});
