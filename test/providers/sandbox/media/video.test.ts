import { describe, expect, test } from "bun:test";
import { bytesSource, measureMedia } from "../../../../src/providers/measure.ts";
import {
  encodeVideo,
  frameTimes,
  MAX_VIDEO_SECONDS,
  VIDEO_MAX_FPS,
  videoSize,
} from "../../../../src/providers/sandbox/media/index.ts";

/** Frame tags of the VP8 frames in a WebM, in order (SimpleBlocks found by a linear scan of clusters). */
function vp8Frames(b: Uint8Array): { key: boolean; timeMs: number; width?: number; height?: number }[] {
  const out: { key: boolean; timeMs: number; width?: number; height?: number }[] = [];
  const vint = (at: number, keep: boolean): [number, number] => {
    const first = b[at]!;
    let len = 1;
    while (!(first & (0x80 >> (len - 1)))) len++;
    let v = keep ? first : first & (0xff >> len);
    for (let i = 1; i < len; i++) v = v * 256 + b[at + i]!;
    return [v, len];
  };
  const walk = (from: number, to: number, clusterTime: number) => {
    let p = from;
    let time = clusterTime;
    while (p < to) {
      const [id, il] = vint(p, true);
      const [size, sl] = vint(p + il, false);
      const data = p + il + sl;
      if (id === 0x18538067 || id === 0x1f43b675) walk(data, data + size, time);
      else if (id === 0xe7) {
        time = 0;
        for (let i = 0; i < size; i++) time = time * 256 + b[data + i]!;
        clusterTime = time;
      } else if (id === 0xa3) {
        const f = b.subarray(data + 4, data + size);
        const key = (f[0]! & 1) === 0;
        const entry: (typeof out)[number] = {
          key,
          timeMs: clusterTime + ((b[data + 1]! << 8) | b[data + 2]!),
        };
        if (key) {
          expect([...f.subarray(3, 6)]).toEqual([0x9d, 0x01, 0x2a]);
          entry.width = f[6]! | (f[7]! << 8);
          entry.height = f[8]! | (f[9]! << 8);
        }
        out.push(entry);
      }
      p = data + size;
    }
  };
  walk(0, b.length, 0);
  return out;
}

describe("frame rules", () => {
  test("sizes keep the aspect ratio within 480x270 worth of pixels", () => {
    expect(videoSize(1280, 720)).toEqual({ width: 480, height: 270 });
    expect(videoSize(1920, 1080)).toEqual({ width: 480, height: 270 });
    expect(videoSize(854, 480)).toEqual({ width: 480, height: 270 });
    expect(videoSize(1080, 1920)).toEqual({ width: 270, height: 480 });
    expect(videoSize(1024, 1024)).toEqual({ width: 360, height: 360 });
    expect(videoSize(160, 90)).toEqual({ width: 160, height: 90 });
    expect(videoSize(8192, 1)).toEqual({ width: 480, height: 1 });
  });

  test("frame times: evenly spread over the duration in ms; count follows the capped fps", () => {
    for (const [d, fps] of [
      [5, 24],
      [10, 30],
      [10, 10],
      [1, 1],
      [2.5, 7],
      [0.05, 24],
      [0.001, 60],
      [600, 12],
      [3.333, 12],
    ] as const) {
      const { durationMs, timesMs } = frameTimes(d, fps);
      expect(durationMs).toBe(Math.round(d * 1000));
      expect(timesMs.length).toBe(Math.max(1, Math.round(d * Math.min(fps, VIDEO_MAX_FPS))));
      expect(timesMs[0]).toBe(0);
      for (let i = 1; i < timesMs.length; i++) expect(timesMs[i]!).toBeGreaterThan(timesMs[i - 1]!);
      expect(timesMs[timesMs.length - 1]!).toBeLessThan(durationMs);
    }
  });
});

describe("encodeVideo", () => {
  test.each([
    [5, 1280, 720, 24],
    [10, 1920, 1080, 30],
    [2, 1080, 1920, 10],
    [1.5, 64, 48, 12],
    [0.3, 33, 17, 10],
  ])("%ss %ix%i at %i fps: a WebM of the right size, duration and frames", (d, w, h, fps) => {
    const r = encodeVideo(d, w, h, fps, "clip");
    expect(r.contentType).toBe("video/webm");
    const size = videoSize(w, h);
    expect([r.width, r.height]).toEqual([size.width, size.height]);
    expect(measureMedia(bytesSource(r.bytes))).toEqual({
      width: r.width,
      height: r.height,
      duration: d,
      still: false,
      known: true,
    });
    const frames = vp8Frames(r.bytes);
    expect(frames.length).toBe(r.frames);
    expect(r.frames).toBe(Math.round(d * Math.min(fps, VIDEO_MAX_FPS)));
    expect(frames.map((f) => f.timeMs)).toEqual(r.timesMs);
    // A key frame every 2 s, each carrying the picture size.
    const every = Math.round(2 * r.fps);
    frames.forEach((f, i) => {
      expect(f.key).toBe(i % every === 0);
      if (f.key) expect([f.width, f.height]).toEqual([r.width, r.height]);
    });
  });

  test("the source frames: progress bar along the bottom, and the picture moves", () => {
    const rows: Uint8Array[] = [];
    const w = 160;
    const h = 90;
    const r = encodeVideo(3, w, h, 10, 11, { onFrame: (_i, _t, rgba) => rows.push(rgba.slice()) });
    expect(rows.length).toBe(r.frames);
    rows.forEach((rgba, f) => {
      const bottom = (h - 1) * w * 4;
      const expected = Math.round((w * (f + 1)) / r.frames);
      for (let x = 0; x < expected; x++)
        expect(rgba.subarray(bottom + x * 4, bottom + x * 4 + 3)).toEqual(Uint8Array.of(255, 255, 255));
    });
    let changed = 0;
    for (let f = 1; f < rows.length; f++) {
      if (
        !Buffer.from(rows[f]!.subarray(0, w * 4 * (h - 4))).equals(
          Buffer.from(rows[f - 1]!.subarray(0, w * 4 * (h - 4))),
        )
      )
        changed++;
    }
    expect(changed).toBeGreaterThan((rows.length - 1) / 2);
  });

  test("avatar style: a talking head whose mouth moves", () => {
    const mouths = new Set<string>();
    const r = encodeVideo(6, 720, 720, 12, "presenter", {
      style: "avatar",
      text: "Hello and welcome, everyone.",
      onFrame: (_i, _t, rgba) => {
        const rows: number[] = [];
        for (let y = Math.round(0.55 * 360); y < Math.round(0.66 * 360); y++)
          rows.push(...rgba.subarray((y * 360 + 150) * 4, (y * 360 + 210) * 4));
        mouths.add(rows.join(","));
      },
    });
    expect([r.width, r.height, r.frames]).toEqual([360, 360, 72]);
    expect(mouths.size).toBeGreaterThan(5);
  });

  test("static parts cost nothing after a key frame: an avatar is far smaller than its key frames alone", () => {
    const r = encodeVideo(10, 854, 480, 10, 5, { style: "avatar" });
    const frames = vp8Frames(r.bytes);
    expect(frames.filter((f) => f.key).length).toBe(5);
    expect(r.bytes.length).toBeLessThan(400 * 1024);
  });

  test("deterministic per seed; different seeds differ", () => {
    const a = encodeVideo(2, 640, 360, 10, 1);
    expect(Buffer.from(encodeVideo(2, 640, 360, 10, 1).bytes).equals(Buffer.from(a.bytes))).toBe(true);
    expect(Buffer.from(encodeVideo(2, 640, 360, 10, 2).bytes).equals(Buffer.from(a.bytes))).toBe(false);
  });

  test("the largest sandbox request (avatar, 60 s) finishes well inside the job time limit", () => {
    const t = performance.now();
    const r = encodeVideo(60, 854, 480, 10, "long", { style: "avatar" });
    const ms = performance.now() - t;
    expect(r.frames).toBe(600);
    expect(measureMedia(bytesSource(r.bytes)).duration).toBe(60);
    expect(ms).toBeLessThan(60_000); // liveness bound only; measured ~0.7 s (see video.ts)
  });

  test("bad arguments throw RangeError", () => {
    const ok = [5, 1280, 720, 24] as const;
    const bad: [number, number, number, number][] = [
      [0, 1280, 720, 24],
      [-1, 1280, 720, 24],
      [MAX_VIDEO_SECONDS + 1, 1280, 720, 24],
      [Number.NaN, 1280, 720, 24],
      [5, 0, 720, 24],
      [5, 1280, 0, 24],
      [5, 1280.5, 720, 24],
      [5, 9000, 720, 24],
      [5, 1280, 720, 0],
      [5, 1280, 720, 61],
      [5, 1280, 720, Number.POSITIVE_INFINITY],
    ];
    expect(() => encodeVideo(...ok, 1)).not.toThrow();
    for (const args of bad) expect(() => encodeVideo(...args, 1)).toThrow(RangeError);
    expect(() => encodeVideo(...ok, 1, { style: "film" as "scene" })).toThrow(RangeError);
  });
});
