import { Rng, type Seed } from "./rng.ts";

/** Frames are rendered at most this size (the requested aspect kept), so a 10 s clip stays small. */
export const MAX_FRAME_WIDTH = 320;
export const MAX_FRAME_HEIGHT = 180;
export const MAX_ANIMATION_SECONDS = 600;

export interface Animation {
  bytes: Uint8Array;
  contentType: "image/gif";
  frames: number;
  width: number;
  height: number;
}

/**
 * A playable animated GIF (GIF89a, looping) exactly `durationSeconds` long: `fps` frames per second,
 * each shown for 100/fps centiseconds, the delays summing to the duration. A moving gradient sky, a
 * bouncing ball and a progress bar, deterministic per seed. GIF is the one animation format every
 * browser and player shows without a codec, and it needs no dependency to write.
 */
export function encodeAnimation(
  durationSeconds: number,
  width: number,
  height: number,
  fps: number,
  seed: Seed,
): Animation {
  if (!(durationSeconds > 0) || durationSeconds > MAX_ANIMATION_SECONDS) {
    throw new RangeError(`encodeAnimation: duration must be in (0, ${MAX_ANIMATION_SECONDS}] seconds`);
  }
  if (
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    width < 1 ||
    height < 1 ||
    width > 8192 ||
    height > 8192
  ) {
    throw new RangeError("encodeAnimation: width and height must be integers in 1..8192");
  }
  if (![1, 2, 4, 5, 10, 20, 25].includes(fps)) throw new RangeError("encodeAnimation: fps must divide 100");
  const scale = Math.min(1, MAX_FRAME_WIDTH / width, MAX_FRAME_HEIGHT / height);
  const w = Math.max(8, Math.round(width * scale));
  const h = Math.max(8, Math.round(height * scale));
  const totalCs = Math.round(durationSeconds * 100);
  const delay = 100 / fps;
  const frames = Math.max(1, Math.ceil(totalCs / delay));
  const rng = Rng.from(seed, "gif");
  const look = {
    hue: rng.next(),
    speed: 0.5 + rng.next(),
    ballR: Math.max(3, Math.round(h * (0.08 + rng.next() * 0.08))),
  };

  const parts: Uint8Array[] = [header(w, h)];
  const pixels = new Uint8Array(w * h);
  let shown = 0;
  for (let f = 0; f < frames; f++) {
    // The last frame takes what is left, so the delays add up to the duration exactly.
    const d = f === frames - 1 ? totalCs - shown : delay;
    shown += d;
    renderFrame(pixels, w, h, f / frames, look);
    parts.push(frame(w, h, d, pixels));
  }
  parts.push(Uint8Array.of(0x3b)); // trailer
  return { bytes: concatAll(parts), contentType: "image/gif", frames, width: w, height: h };
}

/** Palette index of a colour in the 6x6x6 cube (levels 0..5 per channel). */
const cube = (r: number, g: number, b: number) => r * 36 + g * 6 + b;
const level = (v: number) => Math.max(0, Math.min(5, Math.round(v * 5)));

function renderFrame(
  px: Uint8Array,
  w: number,
  h: number,
  t: number,
  look: { hue: number; speed: number; ballR: number },
): void {
  const barTop = h - Math.max(2, Math.round(h * 0.05));
  const bx = Math.round((0.5 + 0.4 * Math.sin(2 * Math.PI * t * look.speed)) * (w - 1));
  const by = Math.round((0.35 + 0.25 * Math.abs(Math.cos(2 * Math.PI * t * look.speed * 2))) * (h - 1));
  const r2 = look.ballR * look.ballR;
  const progress = Math.round(t * w);
  for (let y = 0; y < h; y++) {
    const v = y / h;
    // Sky: two channels drift with time and height; coarse levels keep runs long for LZW.
    const sr = level(0.2 + 0.5 * v * Math.abs(Math.sin(Math.PI * (look.hue + t))));
    const sg = level(0.3 + 0.4 * (1 - v));
    const sb = level(0.6 + 0.4 * (1 - v) * Math.abs(Math.cos(Math.PI * (look.hue + t / 2))));
    const sky = cube(sr, sg, sb);
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let c = sky;
      const dx = x - bx;
      const dy = y - by;
      if (dx * dx + dy * dy <= r2) c = cube(5, 4, 0);
      if (y >= barTop) c = x < progress ? cube(0, 5, 2) : cube(1, 1, 1);
      px[row + x] = c;
    }
  }
}

function header(w: number, h: number): Uint8Array {
  const out: number[] = [];
  for (const ch of "GIF89a") out.push(ch.charCodeAt(0));
  out.push(w & 255, w >> 8, h & 255, h >> 8);
  out.push(0xf7, 0, 0); // global colour table of 256 entries, 8 bits per channel
  for (let i = 0; i < 256; i++) {
    if (i < 216) out.push(Math.floor(i / 36) * 51, (Math.floor(i / 6) % 6) * 51, (i % 6) * 51);
    else {
      const g = Math.round(((i - 216) / 39) * 255);
      out.push(g, g, g);
    }
  }
  // NETSCAPE2.0 application extension: loop forever.
  out.push(0x21, 0xff, 0x0b, ...[..."NETSCAPE2.0"].map((c) => c.charCodeAt(0)), 0x03, 0x01, 0, 0, 0);
  return Uint8Array.from(out);
}

function frame(w: number, h: number, delayCs: number, pixels: Uint8Array): Uint8Array {
  const head = Uint8Array.of(
    0x21,
    0xf9,
    0x04,
    0x00,
    delayCs & 255,
    delayCs >> 8,
    0,
    0, // graphic control: delay, no transparency
    0x2c,
    0,
    0,
    0,
    0,
    w & 255,
    w >> 8,
    h & 255,
    h >> 8,
    0, // image descriptor: full frame, global palette
    8, // LZW minimum code size
  );
  return concatAll([head, subBlocks(lzw(pixels, 8)), Uint8Array.of(0)]);
}

/** GIF's variable-width LZW (codes emitted LSB first), as in the GIF89a spec appendix F. */
export function lzw(indexes: Uint8Array, minCodeSize: number): Uint8Array {
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  let codeSize = minCodeSize + 1;
  let next = eoi + 1;
  let table = new Map<number, number>();
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  const emit = (code: number) => {
    acc |= code << bits;
    bits += codeSize;
    while (bits >= 8) {
      out.push(acc & 255);
      acc >>>= 8;
      bits -= 8;
    }
  };
  emit(clear);
  let prefix = indexes[0] ?? 0;
  for (let i = 1; i < indexes.length; i++) {
    const k = indexes[i]!;
    const key = (prefix << 8) | k;
    const found = table.get(key);
    if (found !== undefined) {
      prefix = found;
      continue;
    }
    emit(prefix);
    if (next === 4096) {
      emit(clear);
      table = new Map();
      next = eoi + 1;
      codeSize = minCodeSize + 1;
    } else {
      if (next >= 1 << codeSize) codeSize++;
      table.set(key, next++);
    }
    prefix = k;
  }
  emit(prefix);
  emit(eoi);
  if (bits > 0) out.push(acc & 255);
  return Uint8Array.from(out);
}

function subBlocks(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const chunk = data.subarray(i, i + 255);
    parts.push(Uint8Array.of(chunk.length), chunk);
  }
  return concatAll(parts);
}

function concatAll(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
