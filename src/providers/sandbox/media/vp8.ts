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
} from "./vp8-tables.ts";

/**
 * A small VP8 encoder (RFC 6386) in pure TypeScript, enough to make real video that every
 * browser's `<video>` plays:
 * - key frames: every macroblock intra coded with 16x16 DC_PRED for luma and DC_PRED for chroma,
 *   forward DCT/WHT as libvpx's vp8_short_fdct4x4_c / vp8_short_walsh4x4_c, one fixed quantizer
 *   index, tokens coded with the default coefficient probabilities (the "no update" flags are
 *   written with the update probabilities), skip flags for macroblocks without coefficients;
 * - inter frames: a macroblock whose source pixels did not change since the previous frame is
 *   coded as "last frame, ZEROMV, no residual" (an exact copy of the decoder's previous picture);
 *   every other macroblock is intra coded as in a key frame. No motion search.
 * - the loop filter is off (level 0), and the encoder reconstructs every macroblock exactly as the
 *   decoder does (prediction from reconstructed neighbours, dequantisation, inverse WHT/DCT with
 *   the decoder's integer arithmetic), so nothing drifts between frames.
 * One token partition; colour space 0 (BT.601); frames padded to whole macroblocks by repeating
 * the last row and column.
 */

export interface Yuv420Frame {
  width: number;
  height: number;
  /** width x height luma samples, row-major. */
  y: Uint8Array;
  /** ceil(width/2) x ceil(height/2) chroma samples each, row-major. */
  u: Uint8Array;
  v: Uint8Array;
}

export interface Vp8EncoderOptions {
  /** Quantizer index 0..127 (lower: better quality, larger frames). */
  qIndex?: number;
}

export const VP8_DEFAULT_Q_INDEX = 10;
export const VP8_MAX_SIDE = 16383;

/** Boolean entropy encoder (RFC 6386 section 7.3); flushed the way libvpx does (32 zero bits at 1/2). */
export class BoolEncoder {
  private buf: Uint8Array;
  private pos = 0;
  private range = 255;
  private bottom = 0; // uint32
  private bitCount = 24;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
  }

  private addOne(): void {
    let i = this.pos - 1;
    while (i >= 0 && this.buf[i] === 255) {
      this.buf[i] = 0;
      i--;
    }
    // i < 0 cannot happen: the first byte written is below 255 (RFC 6386 section 7.3).
    this.buf[i] = this.buf[i]! + 1;
  }

  /** Writes one boolean whose probability of being 0 is prob/256 (prob 1..255). */
  put(bit: boolean | number, prob: number): void {
    const split = 1 + (((this.range - 1) * prob) >> 8);
    if (bit) {
      this.bottom = (this.bottom + split) >>> 0;
      this.range -= split;
    } else this.range = split;
    while (this.range < 128) {
      this.range <<= 1;
      if (this.bottom >= 0x80000000) this.addOne();
      this.bottom = (this.bottom << 1) >>> 0;
      if (--this.bitCount === 0) {
        if (this.pos === this.buf.length) {
          const next = new Uint8Array(this.buf.length * 2);
          next.set(this.buf);
          this.buf = next;
        }
        this.buf[this.pos++] = this.bottom >>> 24;
        this.bottom &= 0xffffff;
        this.bitCount = 8;
      }
    }
  }

  /** An unsigned n-bit literal, most significant bit first, each bit at probability 1/2. */
  literal(value: number, bits: number): void {
    for (let b = bits - 1; b >= 0; b--) this.put((value >> b) & 1, 128);
  }

  finish(): Uint8Array {
    for (let i = 0; i < 32; i++) this.put(0, 128);
    return this.buf.slice(0, this.pos);
  }
}

// ---------------------------------------------------------------------------------------------
// Transforms (integer arithmetic of libvpx; the inverse ones are the decoder's, RFC 6386 ch. 14)

const C1 = 20091; // cos(pi/8) * sqrt(2) - 1, in 1/65536
const S1 = 35468; // sin(pi/8) * sqrt(2), in 1/65536

/** Forward 4x4 DCT of a residual block (libvpx vp8_short_fdct4x4_c); in and out raster order. */
export function fdct4x4(input: Int32Array, out: Int32Array): void {
  const t = FDCT_TMP;
  for (let i = 0; i < 4; i++) {
    const o = i * 4;
    const a1 = (input[o]! + input[o + 3]!) * 8;
    const b1 = (input[o + 1]! + input[o + 2]!) * 8;
    const c1 = (input[o + 1]! - input[o + 2]!) * 8;
    const d1 = (input[o]! - input[o + 3]!) * 8;
    t[o] = a1 + b1;
    t[o + 2] = a1 - b1;
    t[o + 1] = (c1 * 2217 + d1 * 5352 + 14500) >> 12;
    t[o + 3] = (d1 * 2217 - c1 * 5352 + 7500) >> 12;
  }
  for (let i = 0; i < 4; i++) {
    const a1 = t[i]! + t[12 + i]!;
    const b1 = t[4 + i]! + t[8 + i]!;
    const c1 = t[4 + i]! - t[8 + i]!;
    const d1 = t[i]! - t[12 + i]!;
    out[i] = (a1 + b1 + 7) >> 4;
    out[8 + i] = (a1 - b1 + 7) >> 4;
    out[4 + i] = ((c1 * 2217 + d1 * 5352 + 12000) >> 16) + (d1 !== 0 ? 1 : 0);
    out[12 + i] = (d1 * 2217 - c1 * 5352 + 51000) >> 16;
  }
}
const FDCT_TMP = new Int32Array(16);

/** Forward Walsh-Hadamard transform of the 16 luma DC values (libvpx vp8_short_walsh4x4_c). */
export function fwht4x4(input: Int32Array, out: Int32Array): void {
  const t = FDCT_TMP;
  for (let i = 0; i < 4; i++) {
    const o = i * 4;
    const a1 = (input[o]! + input[o + 2]!) * 4;
    const d1 = (input[o + 1]! + input[o + 3]!) * 4;
    const c1 = (input[o + 1]! - input[o + 3]!) * 4;
    const b1 = (input[o]! - input[o + 2]!) * 4;
    t[o] = a1 + d1 + (a1 !== 0 ? 1 : 0);
    t[o + 1] = b1 + c1;
    t[o + 2] = b1 - c1;
    t[o + 3] = a1 - d1;
  }
  for (let i = 0; i < 4; i++) {
    const a1 = t[i]! + t[8 + i]!;
    const d1 = t[4 + i]! + t[12 + i]!;
    const c1 = t[4 + i]! - t[12 + i]!;
    const b1 = t[i]! - t[8 + i]!;
    let a2 = a1 + d1;
    let b2 = b1 + c1;
    let c2 = b1 - c1;
    let d2 = a1 - d1;
    a2 += a2 < 0 ? 1 : 0;
    b2 += b2 < 0 ? 1 : 0;
    c2 += c2 < 0 ? 1 : 0;
    d2 += d2 < 0 ? 1 : 0;
    out[i] = (a2 + 3) >> 3;
    out[4 + i] = (b2 + 3) >> 3;
    out[8 + i] = (c2 + 3) >> 3;
    out[12 + i] = (d2 + 3) >> 3;
  }
}

/** Inverse WHT as the decoder does it (RFC 6386 section 14.3); in and out raster order. */
export function iwht4x4(input: Int32Array, out: Int32Array): void {
  const t = IDCT_TMP;
  for (let i = 0; i < 4; i++) {
    const a1 = input[i]! + input[12 + i]!;
    const b1 = input[4 + i]! + input[8 + i]!;
    const c1 = input[4 + i]! - input[8 + i]!;
    const d1 = input[i]! - input[12 + i]!;
    t[i] = a1 + b1;
    t[4 + i] = c1 + d1;
    t[8 + i] = a1 - b1;
    t[12 + i] = d1 - c1;
  }
  for (let i = 0; i < 4; i++) {
    const o = i * 4;
    const a1 = t[o]! + t[o + 3]!;
    const b1 = t[o + 1]! + t[o + 2]!;
    const c1 = t[o + 1]! - t[o + 2]!;
    const d1 = t[o]! - t[o + 3]!;
    out[o] = (a1 + b1 + 3) >> 3;
    out[o + 1] = (c1 + d1 + 3) >> 3;
    out[o + 2] = (a1 - b1 + 3) >> 3;
    out[o + 3] = (d1 - c1 + 3) >> 3;
  }
}
const IDCT_TMP = new Int32Array(16);

/** (x * 35468) >> 16 and x + ((x * 20091) >> 16), on 16-bit values as the decoder keeps them. */
const mulS1 = (x: number) => (x * S1) >> 16;
const mulC1 = (x: number) => x + ((x * C1) >> 16);
/** Wraps to a signed 16-bit value (the decoder's intermediate storage). */
const i16 = (x: number) => (x << 16) >> 16;

/**
 * Inverse DCT (RFC 6386 section 14.4) of `coefs` (raster order), added to the 4x4 prediction at
 * pred[predAt] (stride predStride) and written, clamped, to dst[dstAt] (stride dstStride).
 */
export function idct4x4Add(
  coefs: Int32Array,
  pred: Uint8Array,
  predAt: number,
  predStride: number,
  dst: Uint8Array,
  dstAt: number,
  dstStride: number,
): void {
  const t = IDCT_TMP;
  for (let i = 0; i < 4; i++) {
    const i0 = coefs[i]!;
    const i1 = coefs[4 + i]!;
    const i2 = coefs[8 + i]!;
    const i3 = coefs[12 + i]!;
    const a1 = i0 + i2;
    const b1 = i0 - i2;
    const c1 = mulS1(i1) - mulC1(i3);
    const d1 = mulC1(i1) + mulS1(i3);
    t[i] = i16(a1 + d1);
    t[12 + i] = i16(a1 - d1);
    t[4 + i] = i16(b1 + c1);
    t[8 + i] = i16(b1 - c1);
  }
  for (let i = 0; i < 4; i++) {
    const o = i * 4;
    const a1 = t[o]! + t[o + 2]!;
    const b1 = t[o]! - t[o + 2]!;
    const c1 = mulS1(t[o + 1]!) - mulC1(t[o + 3]!);
    const d1 = mulC1(t[o + 1]!) + mulS1(t[o + 3]!);
    const p = predAt + i * predStride;
    const d = dstAt + i * dstStride;
    dst[d] = clamp255(pred[p]! + ((a1 + d1 + 4) >> 3));
    dst[d + 3] = clamp255(pred[p + 3]! + ((a1 - d1 + 4) >> 3));
    dst[d + 1] = clamp255(pred[p + 1]! + ((b1 + c1 + 4) >> 3));
    dst[d + 2] = clamp255(pred[p + 2]! + ((b1 - c1 + 4) >> 3));
  }
}

const clamp255 = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

// ---------------------------------------------------------------------------------------------
// Token coding (RFC 6386 section 13)

const TYPE_Y_AFTER_Y2 = 0;
const TYPE_Y2 = 1;
const TYPE_UV = 2;

/**
 * Writes the tokens of one 4x4 block: `q` holds its quantized coefficients in zigzag order,
 * coding starts at `first` (1 for luma blocks whose DC went to Y2). Returns 1 when at least one
 * non-zero coefficient was coded (the neighbour context of the next blocks), else 0.
 */
function writeBlockTokens(bw: BoolEncoder, type: number, ctx: number, q: Int32Array, first: number): number {
  let last = -1;
  for (let i = 15; i >= first; i--) {
    if (q[i] !== 0) {
      last = i;
      break;
    }
  }
  const base = type * 264; // 8 bands x 3 contexts x 11 nodes
  let p = base + (COEF_BANDS[first]! * 3 + ctx) * 11;
  const probs = DEFAULT_COEF_PROBS;
  if (last < 0) {
    bw.put(0, probs[p]!); // EOB
    return 0;
  }
  let afterZero = false;
  let i = first;
  for (; i <= last; i++) {
    const v = q[i]!;
    if (!afterZero) bw.put(1, probs[p]!); // not EOB
    if (v === 0) {
      bw.put(0, probs[p + 1]!);
      afterZero = true;
      p = base + COEF_BANDS[i + 1]! * 33;
      continue;
    }
    bw.put(1, probs[p + 1]!);
    const a = v < 0 ? -v : v;
    let next: number;
    if (a === 1) {
      bw.put(0, probs[p + 2]!);
      next = 1;
    } else {
      bw.put(1, probs[p + 2]!);
      if (a <= 4) {
        bw.put(0, probs[p + 3]!);
        if (a === 2) bw.put(0, probs[p + 4]!);
        else {
          bw.put(1, probs[p + 4]!);
          bw.put(a === 4 ? 1 : 0, probs[p + 5]!);
        }
      } else {
        bw.put(1, probs[p + 3]!);
        if (a <= 10) {
          bw.put(0, probs[p + 6]!);
          if (a <= 6) {
            bw.put(0, probs[p + 7]!);
            bw.put(a - 5, 159);
          } else {
            bw.put(1, probs[p + 7]!);
            const e = a - 7;
            bw.put(e >> 1, 165);
            bw.put(e & 1, 145);
          }
        } else {
          bw.put(1, probs[p + 6]!);
          let cat: number;
          let extra: number;
          if (a <= 34) {
            bw.put(0, probs[p + 8]!);
            if (a <= 18) {
              bw.put(0, probs[p + 9]!);
              cat = 0;
              extra = a - 11;
            } else {
              bw.put(1, probs[p + 9]!);
              cat = 1;
              extra = a - 19;
            }
          } else {
            bw.put(1, probs[p + 8]!);
            if (a <= 66) {
              bw.put(0, probs[p + 10]!);
              cat = 2;
              extra = a - 35;
            } else {
              bw.put(1, probs[p + 10]!);
              cat = 3;
              extra = a - 67;
            }
          }
          const cp = CAT_PROBS[cat]!;
          for (let b = cp.length - 1, k = 0; b >= 0; b--, k++) bw.put((extra >> b) & 1, cp[k]!);
        }
      }
      next = 2;
    }
    bw.put(v < 0 ? 1 : 0, 128);
    afterZero = false;
    if (i + 1 < 16) p = base + (COEF_BANDS[i + 1]! * 3 + next) * 11;
  }
  if (i < 16) bw.put(0, probs[p]!); // EOB
  return 1;
}

/** Largest magnitude a token can carry (DCT_CAT6: 67 + 2^11 - 1). */
const MAX_COEF = 2048;

function quantize(c: number, q: number): number {
  const a = c < 0 ? -c : c;
  let v = Math.floor((a + (q >> 1)) / q);
  if (v > MAX_COEF) v = MAX_COEF;
  return c < 0 ? -v : v;
}

// ---------------------------------------------------------------------------------------------

export interface Vp8EncodedFrame {
  bytes: Uint8Array;
  key: boolean;
}

/**
 * Encodes a sequence of frames of one size. `encode(frame, key)` returns one VP8 frame (a key
 * frame when asked or for the first frame); `recon` holds the decoder's picture after it
 * (padded planes, strides `yStride` / `uvStride`).
 */
export class Vp8Encoder {
  readonly width: number;
  readonly height: number;
  readonly mbw: number;
  readonly mbh: number;
  readonly yStride: number;
  readonly uvStride: number;
  /** The decoder's picture (reconstruction) after the last encoded frame, padded to macroblocks. */
  readonly recon: { y: Uint8Array; u: Uint8Array; v: Uint8Array };
  private src: { y: Uint8Array; u: Uint8Array; v: Uint8Array };
  private prevSrc: { y: Uint8Array; u: Uint8Array; v: Uint8Array };
  private frames = 0;
  private readonly qIndex: number;
  private readonly y1ac: number;
  private readonly y2dc: number;
  private readonly y2ac: number;
  private readonly uvdc: number;
  private readonly uvac: number;

  constructor(width: number, height: number, opts: Vp8EncoderOptions = {}) {
    for (const [name, v] of [
      ["width", width],
      ["height", height],
    ] as const) {
      if (!Number.isInteger(v) || v < 1 || v > VP8_MAX_SIDE)
        throw new RangeError(`${name} must be an integer from 1 to ${VP8_MAX_SIDE}, got ${v}`);
    }
    const q = opts.qIndex ?? VP8_DEFAULT_Q_INDEX;
    if (!Number.isInteger(q) || q < 0 || q > 127) throw new RangeError(`qIndex must be 0..127, got ${q}`);
    this.width = width;
    this.height = height;
    this.mbw = (width + 15) >> 4;
    this.mbh = (height + 15) >> 4;
    this.yStride = this.mbw * 16;
    this.uvStride = this.mbw * 8;
    const planes = () => ({
      y: new Uint8Array(this.yStride * this.mbh * 16),
      u: new Uint8Array(this.uvStride * this.mbh * 8),
      v: new Uint8Array(this.uvStride * this.mbh * 8),
    });
    this.recon = planes();
    this.src = planes();
    this.prevSrc = planes();
    this.qIndex = q;
    // (Luma DC factors are unused: with 16x16 prediction every luma DC goes through Y2.)
    this.y1ac = AC_QLOOKUP[q]!;
    this.y2dc = DC_QLOOKUP[q]! * 2;
    this.y2ac = Math.max(8, Math.floor((AC_QLOOKUP[q]! * 155) / 100));
    this.uvdc = Math.min(132, DC_QLOOKUP[q]!);
    this.uvac = AC_QLOOKUP[q]!;
  }

  /** Copies a frame into the padded source planes, repeating the last column and row. */
  private load(f: Yuv420Frame): void {
    if (f.width !== this.width || f.height !== this.height)
      throw new RangeError(`frame is ${f.width}x${f.height}, the encoder ${this.width}x${this.height}`);
    const cw = (this.width + 1) >> 1;
    const ch = (this.height + 1) >> 1;
    if (f.y.length < this.width * this.height || f.u.length < cw * ch || f.v.length < cw * ch)
      throw new RangeError("frame planes are too small");
    const t = this.prevSrc;
    this.prevSrc = this.src;
    this.src = t;
    pad(f.y, this.width, this.height, this.src.y, this.yStride, this.mbh * 16);
    pad(f.u, cw, ch, this.src.u, this.uvStride, this.mbh * 8);
    pad(f.v, cw, ch, this.src.v, this.uvStride, this.mbh * 8);
  }

  /** True when the macroblock's source pixels equal the previous frame's. */
  private unchanged(mbx: number, mby: number): boolean {
    const { src, prevSrc, yStride, uvStride } = this;
    for (let r = 0; r < 16; r++) {
      const o = (mby * 16 + r) * yStride + mbx * 16;
      for (let c = 0; c < 16; c++) if (src.y[o + c] !== prevSrc.y[o + c]) return false;
    }
    for (let r = 0; r < 8; r++) {
      const o = (mby * 8 + r) * uvStride + mbx * 8;
      for (let c = 0; c < 8; c++) {
        if (src.u[o + c] !== prevSrc.u[o + c] || src.v[o + c] !== prevSrc.v[o + c]) return false;
      }
    }
    return true;
  }

  encode(frame: Yuv420Frame, forceKey = false): Vp8EncodedFrame {
    this.load(frame);
    const key = forceKey || this.frames === 0;
    this.frames++;
    const { mbw, mbh } = this;
    const n = mbw * mbh;
    const isInter = new Uint8Array(n);
    const isSkip = new Uint8Array(n);
    const tokens = new BoolEncoder(1 << 14);
    // Token contexts: "the block above / to the left had non-zero coefficients".
    const aY = new Uint8Array(mbw * 4);
    const aU = new Uint8Array(mbw * 2);
    const aV = new Uint8Array(mbw * 2);
    const aY2 = new Uint8Array(mbw);
    const lY = new Uint8Array(4);
    const lU = new Uint8Array(2);
    const lV = new Uint8Array(2);
    const lY2 = new Uint8Array(1);
    for (let mby = 0; mby < mbh; mby++) {
      lY.fill(0);
      lU.fill(0);
      lV.fill(0);
      lY2[0] = 0;
      for (let mbx = 0; mbx < mbw; mbx++) {
        const i = mby * mbw + mbx;
        if (!key && this.unchanged(mbx, mby)) {
          // Last frame, ZEROMV, no residual: the decoder copies its previous picture, which
          // `recon` already holds for this macroblock.
          isInter[i] = 1;
          isSkip[i] = 1;
        } else {
          isSkip[i] = this.codeIntraMb(mbx, mby, tokens, aY, aU, aV, aY2, lY, lU, lV, lY2) ? 0 : 1;
        }
        if (isSkip[i]) {
          aY.fill(0, mbx * 4, mbx * 4 + 4);
          aU.fill(0, mbx * 2, mbx * 2 + 2);
          aV.fill(0, mbx * 2, mbx * 2 + 2);
          aY2[mbx] = 0;
          lY.fill(0);
          lU.fill(0);
          lV.fill(0);
          lY2[0] = 0;
        }
      }
    }
    const part2 = tokens.finish();
    const part1 = this.header(key, isInter, isSkip);
    const head = key ? 10 : 3;
    const out = new Uint8Array(head + part1.length + part2.length);
    const tag = (key ? 0 : 1) | (0 << 1) | (1 << 4) | (part1.length << 5);
    out[0] = tag & 255;
    out[1] = (tag >>> 8) & 255;
    out[2] = (tag >>> 16) & 255;
    if (key) {
      out.set([0x9d, 0x01, 0x2a, this.width & 255, this.width >> 8, this.height & 255, this.height >> 8], 3);
    }
    out.set(part1, head);
    out.set(part2, head + part1.length);
    return { bytes: out, key };
  }

  /** The first partition: frame header, then each macroblock's modes. */
  private header(key: boolean, isInter: Uint8Array, isSkip: Uint8Array): Uint8Array {
    const bw = new BoolEncoder(4096);
    const { mbw, mbh } = this;
    const n = mbw * mbh;
    if (key) {
      bw.literal(0, 1); // colour space: BT.601
      bw.literal(0, 1); // clamping required
    }
    bw.literal(0, 1); // no segmentation
    bw.literal(0, 1); // filter type
    bw.literal(0, 6); // loop filter level 0: off
    bw.literal(0, 3); // sharpness
    bw.literal(0, 1); // no loop filter deltas
    bw.literal(0, 2); // one token partition
    bw.literal(this.qIndex, 7);
    for (let k = 0; k < 5; k++) bw.literal(0, 1); // no quantizer deltas
    if (key)
      bw.literal(1, 1); // refresh_entropy_probs
    else {
      bw.literal(0, 1); // refresh_golden_frame
      bw.literal(0, 1); // refresh_alternate_frame
      bw.literal(0, 2); // copy_buffer_to_golden: none
      bw.literal(0, 2); // copy_buffer_to_alternate: none
      bw.literal(0, 1); // sign_bias_golden
      bw.literal(0, 1); // sign_bias_alternate
      bw.literal(1, 1); // refresh_entropy_probs
      bw.literal(1, 1); // refresh_last
    }
    for (let k = 0; k < COEF_UPDATE_PROBS.length; k++) bw.put(0, COEF_UPDATE_PROBS[k]!);
    let skips = 0;
    let inters = 0;
    for (let i = 0; i < n; i++) {
      skips += isSkip[i]!;
      inters += isInter[i]!;
    }
    const probSkipFalse = prob8(n - skips, n);
    bw.literal(1, 1); // mb_no_coeff_skip: skip flags present
    bw.literal(probSkipFalse, 8);
    const probIntra = prob8(n - inters, n);
    if (!key) {
      bw.literal(probIntra, 8);
      bw.literal(255, 8); // prob_last: every inter macroblock uses the last frame
      bw.literal(128, 8); // prob_gf (unused)
      bw.literal(0, 1); // no intra_16x16_prob update
      bw.literal(0, 1); // no intra_chroma_prob update
      for (let k = 0; k < MV_UPDATE_PROBS.length; k++) bw.put(0, MV_UPDATE_PROBS[k]!);
    }
    for (let mby = 0; mby < mbh; mby++) {
      for (let mbx = 0; mbx < mbw; mbx++) {
        const i = mby * mbw + mbx;
        bw.put(isSkip[i]!, probSkipFalse);
        if (key) {
          // kf_ymode_tree: DC_PRED is "100" with {145, 156, 163}; kf uv_mode DC_PRED is "0" at 142.
          bw.put(1, 145);
          bw.put(0, 156);
          bw.put(0, 163);
          bw.put(0, 142);
          continue;
        }
        bw.put(isInter[i]!, probIntra);
        if (isInter[i]) {
          bw.put(0, 255); // reference: last frame
          // mv_ref_tree: ZEROMV is "0", with the probability of the neighbours' "zero" count.
          const above = mby > 0 ? isInter[i - mbw]! : 0;
          const left = mbx > 0 ? isInter[i - 1]! : 0;
          const aboveLeft = mby > 0 && mbx > 0 ? isInter[i - mbw - 1]! : 0;
          bw.put(0, MODE_CONTEXT_ZERO[2 * above + 2 * left + aboveLeft]!);
        } else {
          bw.put(0, 112); // ymode_tree: DC_PRED is "0"
          bw.put(0, 162); // uv_mode_tree: DC_PRED is "0"
        }
      }
    }
    return bw.finish();
  }

  /**
   * Intra codes one macroblock (DC_PRED), writing its tokens and its reconstruction. Returns true
   * when it has coefficients (false: skipped, nothing was written).
   */
  private codeIntraMb(
    mbx: number,
    mby: number,
    tokens: BoolEncoder,
    aY: Uint8Array,
    aU: Uint8Array,
    aV: Uint8Array,
    aY2: Uint8Array,
    lY: Uint8Array,
    lU: Uint8Array,
    lV: Uint8Array,
    lY2: Uint8Array,
  ): boolean {
    const { yStride, uvStride, src, recon } = this;
    const qY = MB_Q; // 25 blocks x 16 quantized coefficients, zigzag order (24 = Y2)
    const dq = MB_DQ; // 25 blocks x 16 dequantized coefficients, raster order
    qY.fill(0);
    dq.fill(0);
    const yAt = mby * 16 * yStride + mbx * 16;
    // Luma prediction.
    const predY = dcPredict(recon.y, yStride, yAt, 16, mbx > 0, mby > 0);
    const res = RES;
    const coef = COEF;
    const dcs = DCS;
    let nonzero = false;
    for (let b = 0; b < 16; b++) {
      const at = yAt + (b >> 2) * 4 * yStride + (b & 3) * 4;
      for (let r = 0; r < 4; r++) {
        for (let c = 0; c < 4; c++) res[r * 4 + c] = src.y[at + r * yStride + c]! - predY;
      }
      fdct4x4(res, coef);
      dcs[b] = coef[0]!;
      for (let k = 1; k < 16; k++) {
        const pos = ZIGZAG[k]!;
        const v = quantize(coef[pos]!, this.y1ac);
        qY[b * 16 + k] = v;
        dq[b * 16 + pos] = v * this.y1ac;
        if (v) nonzero = true;
      }
    }
    const y2 = Y2;
    fwht4x4(dcs, y2);
    for (let k = 0; k < 16; k++) {
      const pos = ZIGZAG[k]!;
      const f = pos === 0 ? this.y2dc : this.y2ac;
      const v = quantize(y2[pos]!, f);
      qY[24 * 16 + k] = v;
      dq[24 * 16 + pos] = v * f;
      if (v) nonzero = true;
    }
    // Chroma.
    const uvAt = mby * 8 * uvStride + mbx * 8;
    const predU = dcPredict(recon.u, uvStride, uvAt, 8, mbx > 0, mby > 0);
    const predV = dcPredict(recon.v, uvStride, uvAt, 8, mbx > 0, mby > 0);
    for (let b = 16; b < 24; b++) {
      const plane = b < 20 ? src.u : src.v;
      const pred = b < 20 ? predU : predV;
      const k4 = (b - 16) & 3;
      const at = uvAt + (k4 >> 1) * 4 * uvStride + (k4 & 1) * 4;
      for (let r = 0; r < 4; r++) {
        for (let c = 0; c < 4; c++) res[r * 4 + c] = plane[at + r * uvStride + c]! - pred;
      }
      fdct4x4(res, coef);
      for (let k = 0; k < 16; k++) {
        const pos = ZIGZAG[k]!;
        const f = pos === 0 ? this.uvdc : this.uvac;
        const v = quantize(coef[pos]!, f);
        qY[b * 16 + k] = v;
        dq[b * 16 + pos] = v * f;
        if (v) nonzero = true;
      }
    }

    // Reconstruction, exactly as the decoder: inverse WHT gives each luma block its DC.
    const flat = FLAT;
    iwht4x4(dq.subarray(24 * 16, 25 * 16), dcs);
    flat.fill(predY);
    for (let b = 0; b < 16; b++) {
      const blk = dq.subarray(b * 16, b * 16 + 16);
      blk[0] = dcs[b]!;
      const at = yAt + (b >> 2) * 4 * yStride + (b & 3) * 4;
      idct4x4Add(blk, flat, 0, 4, recon.y, at, yStride);
    }
    for (let b = 16; b < 24; b++) {
      const plane = b < 20 ? recon.u : recon.v;
      flat.fill(b < 20 ? predU : predV);
      const k4 = (b - 16) & 3;
      const at = uvAt + (k4 >> 1) * 4 * uvStride + (k4 & 1) * 4;
      idct4x4Add(dq.subarray(b * 16, b * 16 + 16), flat, 0, 4, plane, at, uvStride);
    }
    if (!nonzero) return false;

    // Tokens: Y2, 16 Y, 4 U, 4 V.
    let nz = writeBlockTokens(tokens, TYPE_Y2, aY2[mbx]! + lY2[0]!, qY.subarray(24 * 16, 25 * 16), 0);
    aY2[mbx] = nz;
    lY2[0] = nz;
    for (let b = 0; b < 16; b++) {
      const bx = b & 3;
      const by = b >> 2;
      nz = writeBlockTokens(
        tokens,
        TYPE_Y_AFTER_Y2,
        aY[mbx * 4 + bx]! + lY[by]!,
        qY.subarray(b * 16, b * 16 + 16),
        1,
      );
      aY[mbx * 4 + bx] = nz;
      lY[by] = nz;
    }
    for (let b = 16; b < 24; b++) {
      const a = b < 20 ? aU : aV;
      const l = b < 20 ? lU : lV;
      const k4 = (b - 16) & 3;
      const bx = k4 & 1;
      const by = k4 >> 1;
      nz = writeBlockTokens(tokens, TYPE_UV, a[mbx * 2 + bx]! + l[by]!, qY.subarray(b * 16, b * 16 + 16), 0);
      a[mbx * 2 + bx] = nz;
      l[by] = nz;
    }
    return true;
  }
}

const MB_Q = new Int32Array(25 * 16);
const MB_DQ = new Int32Array(25 * 16);
const RES = new Int32Array(16);
const COEF = new Int32Array(16);
const DCS = new Int32Array(16);
const Y2 = new Int32Array(16);
const FLAT = new Uint8Array(16);

/** An 8-bit probability for `count` zeros out of `total` (1..255). */
function prob8(count: number, total: number): number {
  if (total === 0) return 128;
  return Math.max(1, Math.min(255, Math.round((256 * count) / total)));
}

/**
 * DC prediction of a size x size block at `at` from the reconstructed row above and column to the
 * left (RFC 6386 section 12.2): their rounded mean, one of them when the other is outside the
 * frame, 128 at the top-left corner.
 */
function dcPredict(
  plane: Uint8Array,
  stride: number,
  at: number,
  size: number,
  left: boolean,
  up: boolean,
): number {
  let sum = 0;
  if (up) for (let c = 0; c < size; c++) sum += plane[at - stride + c]!;
  if (left) for (let r = 0; r < size; r++) sum += plane[at + r * stride - 1]!;
  const shift = (size === 16 ? 3 : 2) + (up ? 1 : 0) + (left ? 1 : 0);
  if (!up && !left) return 128;
  return (sum + (1 << (shift - 1))) >> shift;
}

/** Copies a w x h plane into a padded one (stride, rows), repeating the last column and row. */
function pad(from: Uint8Array, w: number, h: number, to: Uint8Array, stride: number, rows: number): void {
  for (let y = 0; y < rows; y++) {
    const sy = y < h ? y : h - 1;
    const s = sy * w;
    const d = y * stride;
    to.set(from.subarray(s, s + w), d);
    if (stride > w) to.fill(from[s + w - 1]!, d + w, d + stride);
  }
}
