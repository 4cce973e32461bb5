import { constants, crc32, deflateRawSync } from "node:zlib";
import { concatBytes } from "../../../lib/bytes.ts";
import { PNG_SIGNATURE } from "../../../lib/image-size.ts";
import { hashSeed, type Seed } from "./rng.ts";
import { clamp01, makeScene, mix, type Rgb, ridgeAt, skyAt } from "./scene.ts";

/** Largest accepted width or height. */
export const MAX_PNG_SIDE = 8192;
/**
 * Largest accepted pixel count: 8192 x 8192 = 67,108,864 (64 Mi pixels), enough for the
 * sandbox upscaler's 64-megapixel ceiling. Memory stays bounded at any size because rows are
 * rendered and deflated in bands of about 4 MiB; only the compressed file is held whole.
 */
export const MAX_PNG_PIXELS = MAX_PNG_SIDE * MAX_PNG_SIDE;

/** PNG scanline filter types (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth). */
export type PngFilter = 0 | 1 | 2 | 3 | 4;

export interface PngOptions {
  /** RGBA with transparent rounded corners instead of opaque RGB. Default false. */
  alpha?: boolean;
  /** zlib level 0..9. Default 6. */
  level?: number;
  /** Scanline filter for every row. Default 1 (Sub), the best speed/size trade-off here. */
  filter?: PngFilter;
}

const BAND_BYTES = 4 * 1024 * 1024;
const MAX_IDAT = 1024 * 1024;

function checkDimension(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1 || v > MAX_PNG_SIDE) {
    throw new RangeError(`${name} must be an integer from 1 to ${MAX_PNG_SIDE}, got ${v}`);
  }
}

/**
 * Encodes a deterministic landscape placeholder of exactly width x height pixels as an 8-bit
 * RGB (or RGBA) PNG. Same arguments, same bytes.
 */
export function encodePng(width: number, height: number, seed: Seed, opts: PngOptions = {}): Uint8Array {
  checkDimension("width", width);
  checkDimension("height", height);
  if (width * height > MAX_PNG_PIXELS) {
    throw new RangeError(`image of ${width}x${height} exceeds the ${MAX_PNG_PIXELS} pixel limit`);
  }
  const level = opts.level ?? 6;
  if (!Number.isInteger(level) || level < 0 || level > 9) {
    throw new RangeError(`level must be an integer from 0 to 9, got ${level}`);
  }
  const filter = opts.filter ?? 1;
  if (![0, 1, 2, 3, 4].includes(filter)) throw new RangeError(`filter must be 0..4, got ${filter}`);
  const alpha = opts.alpha === true;
  const bpp = alpha ? 4 : 3;
  const stride = width * bpp;

  const painter = new Painter(width, height, seed, alpha);
  const rowsPerBand = Math.max(1, Math.floor(BAND_BYTES / (stride + 1)));
  const band = new Uint8Array(rowsPerBand * (stride + 1));
  let prev = new Uint8Array(stride);
  let cur = new Uint8Array(stride);

  const zparts: Uint8Array[] = [Uint8Array.of(0x78, 0x9c)];
  let adler = 1;
  for (let y0 = 0; y0 < height; y0 += rowsPerBand) {
    const y1 = Math.min(height, y0 + rowsPerBand);
    let o = 0;
    for (let y = y0; y < y1; y++) {
      painter.row(y, cur);
      band[o] = filter;
      filterRow(filter, cur, prev, band, o + 1, bpp);
      o += stride + 1;
      const t = prev;
      prev = cur;
      cur = t;
    }
    const raw = band.subarray(0, o);
    adler = adler32Combine(adler, Bun.hash.adler32(raw), o);
    // Each band is its own raw deflate segment ending on a byte boundary (sync flush); the last
    // one is finished with BFINAL. Back-references never cross bands, which costs very little.
    const last = y1 === height;
    zparts.push(
      deflateRawSync(raw, { level, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH }),
    );
  }
  zparts.push(Uint8Array.of(adler >>> 24, (adler >>> 16) & 255, (adler >>> 8) & 255, adler & 255));
  const zlib = concatBytes(zparts);

  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, width);
  dv.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = alpha ? 6 : 2; // colour type: truecolour (+ alpha)
  ihdr[10] = 0; // compression: deflate
  ihdr[11] = 0; // filter method 0
  ihdr[12] = 0; // no interlace

  const parts: Uint8Array[] = [PNG_SIGNATURE, pngChunk("IHDR", ihdr)];
  for (let i = 0; i < zlib.length; i += MAX_IDAT)
    parts.push(pngChunk("IDAT", zlib.subarray(i, i + MAX_IDAT)));
  parts.push(pngChunk("IEND", new Uint8Array(0)));
  return concatBytes(parts);
}

/** One PNG chunk: length, type, data, CRC-32 of type + data. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  dv.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)) >>> 0);
  return out;
}

/** zlib's adler32_combine: the Adler-32 of A||B from those of A and B and B's length. */
export function adler32Combine(a1: number, a2: number, len2: number): number {
  const BASE = 65521;
  const rem = len2 % BASE;
  let sum1 = a1 & 0xffff;
  let sum2 = (rem * sum1) % BASE;
  sum1 += (a2 & 0xffff) + BASE - 1;
  sum2 += ((a1 >>> 16) & 0xffff) + ((a2 >>> 16) & 0xffff) + BASE - rem;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum2 >= BASE * 2) sum2 -= BASE * 2;
  if (sum2 >= BASE) sum2 -= BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}

function filterRow(
  f: PngFilter,
  cur: Uint8Array,
  prev: Uint8Array,
  out: Uint8Array,
  o: number,
  bpp: number,
): void {
  const n = cur.length;
  switch (f) {
    case 0:
      out.set(cur, o);
      return;
    case 1:
      for (let i = 0; i < bpp; i++) out[o + i] = cur[i]!;
      for (let i = bpp; i < n; i++) out[o + i] = (cur[i]! - cur[i - bpp]!) & 255;
      return;
    case 2:
      for (let i = 0; i < n; i++) out[o + i] = (cur[i]! - prev[i]!) & 255;
      return;
    case 3:
      for (let i = 0; i < bpp; i++) out[o + i] = (cur[i]! - (prev[i]! >> 1)) & 255;
      for (let i = bpp; i < n; i++) out[o + i] = (cur[i]! - ((cur[i - bpp]! + prev[i]!) >> 1)) & 255;
      return;
    case 4:
      for (let i = 0; i < bpp; i++) out[o + i] = (cur[i]! - prev[i]!) & 255;
      for (let i = bpp; i < n; i++) {
        const a = cur[i - bpp]!;
        const b = prev[i]!;
        const c = prev[i - bpp]!;
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        const pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        out[o + i] = (cur[i]! - pred) & 255;
      }
      return;
  }
}

interface CloudPx {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  cy: number;
  ry: number;
  parts: { cx: number; cy: number; rx: number; ry: number }[];
  light: Rgb;
  shade: Rgb;
}

/** Renders the seeded landscape one scanline at a time, with anti-aliased edges. */
class Painter {
  private readonly tops: Float32Array[];
  private readonly minTop: number;
  private readonly r: Float32Array;
  private readonly g: Float32Array;
  private readonly b: Float32Array;
  private readonly scene;
  private readonly sun: { x: number; y: number; r: number; glowR: number; color: Rgb; glow: Rgb };
  private readonly clouds: CloudPx[];
  private readonly corner: number;

  constructor(
    private readonly w: number,
    private readonly h: number,
    seed: Seed,
    private readonly alpha: boolean,
  ) {
    this.scene = makeScene(hashSeed(seed, "png"));
    this.r = new Float32Array(w);
    this.g = new Float32Array(w);
    this.b = new Float32Array(w);
    let minTop = h;
    this.tops = this.scene.layers.map((layer) => {
      const t = new Float32Array(w);
      for (let x = 0; x < w; x++) {
        const v = ridgeAt(layer, (x + 0.5) / h) * h;
        t[x] = v;
        if (v < minTop) minTop = v;
      }
      return t;
    });
    this.minTop = minTop;
    const s = this.scene.sun;
    const sunR = Math.max(0.5, s.r * h);
    this.sun = { x: s.x * w, y: s.y * h, r: sunR, glowR: sunR * 3.2, color: s.color, glow: s.glow };
    this.clouds = this.scene.clouds.map((c) => {
      const parts = c.parts.map((p) => ({
        cx: c.x * w + p.dx * h,
        cy: (c.y + p.dy) * h,
        rx: Math.max(0.5, p.rx * h),
        ry: Math.max(0.5, p.ry * h),
      }));
      let x0 = Number.POSITIVE_INFINITY;
      let x1 = Number.NEGATIVE_INFINITY;
      let y0 = Number.POSITIVE_INFINITY;
      let y1 = Number.NEGATIVE_INFINITY;
      let ry = 0;
      for (const p of parts) {
        x0 = Math.min(x0, p.cx - p.rx - 1);
        x1 = Math.max(x1, p.cx + p.rx + 1);
        y0 = Math.min(y0, p.cy - p.ry - 1);
        y1 = Math.max(y1, p.cy + p.ry + 1);
        ry = Math.max(ry, p.ry);
      }
      return { x0, x1, y0, y1, cy: c.y * h, ry, parts, light: c.light, shade: c.shade };
    });
    this.corner = alpha ? Math.max(0, Math.round(Math.min(w, h) * 0.04)) : 0;
  }

  row(y: number, out: Uint8Array): void {
    const { w, h, r, g, b } = this;
    const yc = y + 0.5;
    const sky = skyAt(this.scene, yc / h);
    r.fill(sky[0]);
    g.fill(sky[1]);
    b.fill(sky[2]);

    const sun = this.sun;
    const dy = yc - sun.y;
    if (Math.abs(dy) < sun.glowR) {
      const x0 = Math.max(0, Math.floor(sun.x - sun.glowR));
      const x1 = Math.min(w, Math.ceil(sun.x + sun.glowR));
      for (let x = x0; x < x1; x++) {
        const dx = x + 0.5 - sun.x;
        const d = Math.sqrt(dx * dx + dy * dy);
        if (d >= sun.glowR) continue;
        const k = 1 - d / sun.glowR;
        const gl = k * k * 0.55;
        let rr = r[x]! + (sun.glow[0] - r[x]!) * gl;
        let gg = g[x]! + (sun.glow[1] - g[x]!) * gl;
        let bb = b[x]! + (sun.glow[2] - b[x]!) * gl;
        const cov = clamp01(sun.r - d + 0.5);
        if (cov > 0) {
          rr += (sun.color[0] - rr) * cov;
          gg += (sun.color[1] - gg) * cov;
          bb += (sun.color[2] - bb) * cov;
        }
        r[x] = rr;
        g[x] = gg;
        b[x] = bb;
      }
    }

    for (const c of this.clouds) {
      if (yc < c.y0 || yc > c.y1) continue;
      const t = clamp01((yc - c.cy) / (2 * c.ry) + 0.5);
      const col = mix(c.light, c.shade, t * t);
      const x0 = Math.max(0, Math.floor(c.x0));
      const x1 = Math.min(w, Math.ceil(c.x1));
      for (let x = x0; x < x1; x++) {
        const xc = x + 0.5;
        let cov = 0;
        for (const p of c.parts) {
          const ex = (xc - p.cx) / p.rx;
          const ey = (yc - p.cy) / p.ry;
          const q = ex * ex + ey * ey;
          if (q >= 1.2) continue;
          const k = clamp01((1 - Math.sqrt(q)) * p.ry + 0.5);
          if (k > cov) cov = k;
        }
        if (cov > 0) {
          r[x] = r[x]! + (col[0] - r[x]!) * cov * 0.92;
          g[x] = g[x]! + (col[1] - g[x]!) * cov * 0.92;
          b[x] = b[x]! + (col[2] - b[x]!) * cov * 0.92;
        }
      }
    }

    if (y + 1 > this.minTop) {
      const layers = this.scene.layers;
      for (let l = 0; l < layers.length; l++) {
        const layer = layers[l]!;
        const top = this.tops[l]!;
        const ridgeTop = layer.base - layer.amp;
        const mt = clamp01((yc / h - ridgeTop) / (1 - ridgeTop + 1e-9));
        const col = mix(layer.color, layer.mist, mt * mt * 0.9);
        const [cr, cg, cb] = col;
        for (let x = 0; x < w; x++) {
          const cov = y + 1 - top[x]!;
          if (cov <= 0) continue;
          if (cov >= 1) {
            r[x] = cr;
            g[x] = cg;
            b[x] = cb;
          } else {
            r[x] = r[x]! + (cr - r[x]!) * cov;
            g[x] = g[x]! + (cg - g[x]!) * cov;
            b[x] = b[x]! + (cb - b[x]!) * cov;
          }
        }
      }
    }

    if (!this.alpha) {
      for (let x = 0, o = 0; x < w; x++, o += 3) {
        out[o] = r[x]! + 0.5;
        out[o + 1] = g[x]! + 0.5;
        out[o + 2] = b[x]! + 0.5;
      }
      return;
    }
    for (let x = 0, o = 0; x < w; x++, o += 4) {
      out[o] = r[x]! + 0.5;
      out[o + 1] = g[x]! + 0.5;
      out[o + 2] = b[x]! + 0.5;
      out[o + 3] = 255;
    }
    const rc = this.corner;
    const cy = y < rc ? rc : y >= h - rc ? h - rc : -1;
    if (cy < 0) return;
    for (let x = 0; x < w; x++) {
      const cx = x < rc ? rc : x >= w - rc ? w - rc : -1;
      if (cx < 0) {
        x = w - rc - 1;
        continue;
      }
      const dx = x + 0.5 - cx;
      const dyc = yc - cy;
      const cov = clamp01(rc - Math.sqrt(dx * dx + dyc * dyc) + 0.5);
      out[x * 4 + 3] = Math.round(cov * 255);
    }
  }
}
