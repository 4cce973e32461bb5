import { describe, expect, test } from "bun:test";
import {
  ANIMATION_MAX_FPS,
  animationSize,
  encodeAnimation,
  frameDelays,
  lzwEncode,
  MAX_ANIMATION_SECONDS,
} from "../../../../src/providers/sandbox/media/index.ts";
import { Rng } from "../../../../src/providers/sandbox/media/rng.ts";
import { compositeGif, decodeGif, lzwDecode } from "./decoders.ts";

describe("lzwEncode", () => {
  test("round-trips through an independent decoder, including table resets", () => {
    const rng = new Rng(123);
    const cases: [number, Uint8Array][] = [];
    for (const minCodeSize of [2, 3, 4, 7, 8]) {
      const colours = 1 << minCodeSize;
      for (const len of [0, 1, 2, 3, 255, 256, 4093, 4096, 5000, 70_000]) {
        for (const alphabet of [1, 2, colours]) {
          const data = new Uint8Array(len);
          for (let i = 0; i < len; i++) data[i] = Math.floor(rng.next() * alphabet) % colours;
          cases.push([minCodeSize, data]);
        }
      }
      // Long runs and a slowly varying ramp.
      cases.push([minCodeSize, new Uint8Array(100_000).map((_, i) => (i >> 9) % colours)]);
    }
    for (const [minCodeSize, data] of cases) {
      const decoded = lzwDecode(lzwEncode(data, minCodeSize), minCodeSize, data.length);
      expect(decoded.length).toBe(data.length);
      expect(Buffer.from(decoded).equals(Buffer.from(data))).toBe(true);
    }
  });

  test("random 8-bit data is not expanded much and fills the table many times", () => {
    const rng = new Rng(5);
    const data = new Uint8Array(200_000).map(() => Math.floor(rng.next() * 256));
    const enc = lzwEncode(data, 8);
    expect(enc.length).toBeLessThan(data.length * 1.5);
    expect(Buffer.from(lzwDecode(enc, 8)).equals(Buffer.from(data))).toBe(true);
  });

  test("rejects indices that do not fit the code size", () => {
    expect(() => lzwEncode(Uint8Array.of(0, 4), 2)).toThrow(RangeError);
    expect(() => lzwEncode(Uint8Array.of(0), 1)).toThrow(RangeError);
    expect(() => lzwEncode(Uint8Array.of(0), 9)).toThrow(RangeError);
  });
});

describe("frame rules", () => {
  test("sizes keep the aspect ratio within 480x270 worth of pixels", () => {
    expect(animationSize(1280, 720)).toEqual({ width: 480, height: 270 });
    expect(animationSize(1920, 1080)).toEqual({ width: 480, height: 270 });
    expect(animationSize(854, 480)).toEqual({ width: 480, height: 270 });
    expect(animationSize(1080, 1920)).toEqual({ width: 270, height: 480 });
    expect(animationSize(1024, 1024)).toEqual({ width: 360, height: 360 });
    expect(animationSize(160, 90)).toEqual({ width: 160, height: 90 });
    expect(animationSize(8192, 1)).toEqual({ width: 480, height: 1 });
  });

  test("delays sum to the duration in centiseconds; frame count follows the capped fps", () => {
    for (const [d, fps] of [
      [5, 24],
      [10, 30],
      [10, 10],
      [1, 1],
      [2.5, 7],
      [0.05, 24],
      [0.01, 60],
      [600, 12],
      [3.333, 12],
    ]) {
      const delays = frameDelays(d!, fps!);
      const eff = Math.min(fps!, ANIMATION_MAX_FPS);
      const total = Math.max(2, Math.round(d! * 100));
      expect(delays.reduce((a, b) => a + b, 0)).toBe(total);
      expect(delays.length).toBe(Math.max(1, Math.min(Math.floor(total / 2), Math.round(d! * eff))));
      for (const x of delays) expect(x).toBeGreaterThanOrEqual(2);
      expect(Math.max(...delays) - Math.min(...delays)).toBeLessThanOrEqual(1);
    }
  });
});

describe("encodeAnimation", () => {
  test.each([
    [5, 1280, 720, 24],
    [10, 1920, 1080, 30],
    [2, 1080, 1920, 10],
    [1.5, 64, 48, 12],
  ])("%ss %ix%i at %i fps: valid looping GIF89a of the right length", (d, w, h, fps) => {
    const r = encodeAnimation(d, w, h, fps, "clip");
    expect(r.contentType).toBe("image/gif");
    const size = animationSize(w, h);
    expect([r.width, r.height]).toEqual([size.width, size.height]);
    const gif = decodeGif(r.bytes);
    expect(gif.version).toBe("GIF89a");
    expect([gif.width, gif.height]).toEqual([r.width, r.height]);
    expect(gif.palette.length).toBe(768);
    expect(gif.loop).toBe(0);
    expect(gif.frames.length).toBe(r.frames);
    expect(r.frames).toBe(Math.round(d * Math.min(fps, ANIMATION_MAX_FPS)));
    expect(gif.frames.map((f) => f.delayCs)).toEqual(r.delaysCs);
    expect(gif.frames.reduce((a, f) => a + f.delayCs, 0)).toBe(Math.round(d * 100));
    // Frame 0 is full and opaque; later frames are sub-rectangles on the screen.
    const first = gif.frames[0]!;
    expect([first.left, first.top, first.width, first.height, first.transparent]).toEqual([
      0,
      0,
      r.width,
      r.height,
      -1,
    ]);
    expect(first.indices.length).toBe(r.width * r.height);
    for (const f of gif.frames) {
      expect(f.indices.length).toBe(f.width * f.height);
      expect(f.left + f.width).toBeLessThanOrEqual(r.width);
      expect(f.top + f.height).toBeLessThanOrEqual(r.height);
      expect(f.disposal).toBe(1);
    }
    // After compositing, the bottom row carries a white progress bar of the expected length.
    const white = [...Array(256).keys()].find(
      (i) => gif.palette[i * 3] === 255 && gif.palette[i * 3 + 1] === 255 && gif.palette[i * 3 + 2] === 255,
    );
    expect(white).toBeDefined();
    const canvases = compositeGif(gif);
    canvases.forEach((canvas, f) => {
      const row = canvas.subarray((r.height - 1) * r.width, r.height * r.width);
      const expected = Math.round((r.width * (f + 1)) / r.frames);
      expect(row.subarray(0, expected).every((v) => v === white)).toBe(true);
      if (expected < r.width) expect(row[expected]).not.toBe(white);
    });
    // It moves: consecutive canvases differ above the progress bar.
    if (r.frames > 2) {
      const above = r.width * (r.height - 4);
      let changed = 0;
      for (let f = 1; f < canvases.length; f++) {
        if (
          !Buffer.from(canvases[f]!.subarray(0, above)).equals(
            Buffer.from(canvases[f - 1]!.subarray(0, above)),
          )
        )
          changed++;
      }
      expect(changed).toBeGreaterThan((canvases.length - 1) / 2);
    }
  });

  test("avatar style: a talking head whose mouth moves", () => {
    const r = encodeAnimation(6, 720, 720, 12, "presenter", {
      style: "avatar",
      text: "Hello and welcome, everyone.",
    });
    const gif = decodeGif(r.bytes);
    expect([gif.width, gif.height]).toEqual([360, 360]);
    expect(gif.frames.length).toBe(72);
    expect(gif.frames.reduce((a, f) => a + f.delayCs, 0)).toBe(600);
    const canvases = compositeGif(gif);
    // The mouth region (centre, 60% down) changes over time.
    const distinct = new Set<string>();
    for (const c of canvases) {
      const rows: number[] = [];
      for (let y = Math.round(0.55 * 360); y < Math.round(0.66 * 360); y++)
        rows.push(...c.subarray(y * 360 + 150, y * 360 + 210));
      distinct.add(rows.join(","));
    }
    expect(distinct.size).toBeGreaterThan(5);
  });

  test("deterministic per seed; different seeds differ", () => {
    const a = encodeAnimation(2, 640, 360, 10, 1);
    expect(Buffer.from(encodeAnimation(2, 640, 360, 10, 1).bytes).equals(Buffer.from(a.bytes))).toBe(true);
    expect(Buffer.from(encodeAnimation(2, 640, 360, 10, 2).bytes).equals(Buffer.from(a.bytes))).toBe(false);
  });

  test("a 10 s 1080p request stays small and quick", () => {
    const t = performance.now();
    const r = encodeAnimation(10, 1920, 1080, 24, "size");
    const ms = performance.now() - t;
    expect(r.frames).toBe(120);
    expect(r.bytes.length).toBeLessThan(3 * 1024 * 1024);
    expect(ms).toBeLessThan(5000); // typically ~150 ms
  });

  test("bad arguments throw RangeError", () => {
    const ok = [5, 1280, 720, 24] as const;
    const bad: [number, number, number, number][] = [
      [0, 1280, 720, 24],
      [-1, 1280, 720, 24],
      [MAX_ANIMATION_SECONDS + 1, 1280, 720, 24],
      [Number.NaN, 1280, 720, 24],
      [5, 0, 720, 24],
      [5, 1280, 0, 24],
      [5, 1280.5, 720, 24],
      [5, 9000, 720, 24],
      [5, 1280, 720, 0],
      [5, 1280, 720, 61],
      [5, 1280, 720, Number.POSITIVE_INFINITY],
    ];
    expect(() => encodeAnimation(...ok, 1)).not.toThrow();
    for (const args of bad) expect(() => encodeAnimation(...args, 1)).toThrow(RangeError);
    expect(() => encodeAnimation(...ok, 1, { style: "film" as "scene" })).toThrow(RangeError);
  });
});
