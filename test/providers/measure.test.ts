import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import {
  bytesSource,
  MEASURE_INLINE_BYTES,
  measureFile,
  measureFileAsync,
  measureMedia,
  wavSeconds,
} from "../../src/providers/measure.ts";
import { encodeVideo } from "../../src/providers/sandbox/media/index.ts";
import { concat, flac, gif, largeGif, mp3, mp4, png, wav } from "./media-fixtures.ts";

const m = (b: Uint8Array) => measureMedia(bytesSource(b));

describe("measureMedia: what a delivered file is", () => {
  test("still images: pixel size, no duration", () => {
    expect(m(png(123, 45))).toEqual({ width: 123, height: 45, duration: null, still: true, known: true });
  });

  test("an animated GIF: its frame size and the sum of its frame delays; one frame is a still", () => {
    expect(m(gif(320, 200, [10, 15, 25]))).toEqual({
      width: 320,
      height: 200,
      duration: 0.5,
      still: false,
      known: true,
    });
    expect(m(gif(64, 48, [700]))).toEqual({
      width: 64,
      height: 48,
      duration: null,
      still: true,
      known: true,
    });
  });

  test("WebM: the Segment's Info Duration (times TimecodeScale) and the video track's pixel size", () => {
    for (const [seconds, w, h] of [
      [1, 1280, 720],
      [2.5, 202, 150],
      [3.333, 1080, 1920],
    ] as const) {
      const v = encodeVideo(seconds, w, h, 10, 3);
      expect(m(v.bytes)).toEqual({
        width: v.width,
        height: v.height,
        duration: seconds,
        still: false,
        known: true,
      });
    }
  });

  test("WAV: data bytes / byte rate; a streaming header (size 0) runs to the end of the file", () => {
    expect(m(wav(4)).duration).toBe(4);
    const streaming = wav(3);
    const dataAt = streaming.findIndex(
      (_, i) => String.fromCharCode(...streaming.subarray(i, i + 4)) === "data",
    );
    new DataView(streaming.buffer).setUint32(dataAt + 4, 0, true);
    expect(wavSeconds(streaming)).toBe(3);
  });

  test("MP4/MOV: the movie header's duration (32- and 64-bit), or mehd when fragmented", () => {
    expect(m(mp4(3)).duration).toBe(3);
    expect(m(mp4(4.5, { version: 1 })).duration).toBe(4.5);
    expect(m(mp4(6, { fragmented: true })).duration).toBe(6);
    expect(m(mp4(2)).known).toBe(true);
  });

  test("MP3: constant bitrate over the audio bytes, with or without an ID3 tag; Xing frame counts", () => {
    expect(m(mp3(6)).duration).toBeCloseTo(6, 1);
    expect(m(mp3(10, false)).duration).toBeCloseTo(10, 1);
    // A Xing header in the first frame says 1000 frames of 1152 samples at 44.1 kHz.
    const first = new Uint8Array(417);
    first.set([0xff, 0xfb, 0x90, 0x00]);
    first.set(new TextEncoder().encode("Xing"), 36);
    first.set([0, 0, 0, 1, 0, 0, 0x03, 0xe8], 40);
    expect(m(concat(first, mp3(1, false))).duration).toBeCloseTo((1000 * 1152) / 44100, 6);
  });

  test("FLAC: STREAMINFO samples / rate", () => {
    expect(m(flac(7.25)).duration).toBe(7.25);
  });

  test("formats it cannot read measure as unknown, never as zero", () => {
    const webm = Uint8Array.from([0x1a, 0x45, 0xdf, 0xa3, ...new Array(60).fill(7)]); // malformed
    for (const b of [webm, new TextEncoder().encode("just some text, not media"), new Uint8Array(3)]) {
      expect(m(b)).toMatchObject({ known: false, duration: null, width: null, still: false });
    }
  });

  test("a file on disk measures like its bytes, reading only what it needs", () => {
    const dir = mkdtempSync(join(tmpdir(), "gengate-measure-"));
    for (const [name, bytes] of [
      ["a.png", png(20, 10)],
      ["a.wav", wav(2)],
      ["a.mp4", mp4(3)],
      ["a.mp3", mp3(2)],
    ] as const) {
      writeFileSync(join(dir, name), bytes);
      expect(measureFile(join(dir, name))).toEqual(m(bytes));
    }
  });

  test("a large file is measured off the event loop, with the same result (issue 31)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "gengate-measure-")), "big.gif");
    const bytes = largeGif(4 * MEASURE_INLINE_BYTES, 25);
    writeFileSync(path, bytes);
    const expected = { width: 1, height: 1, duration: 0.5, still: false, known: true };
    expect(measureFile(path)).toEqual(expected);
    // Measured on this thread, the 64 MiB read and walk is one piece of 25-45 ms: no timer fires.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    let measured: unknown;
    try {
      measured = await measureFileAsync(path, bytes.length);
    } finally {
      clearInterval(timer);
    }
    expect(measured).toEqual(expected);
    expect(ticks).toBeGreaterThan(0);
    // A small file stays on this thread (a header read).
    const small = join(path, "../small.gif");
    writeFileSync(small, gif(3, 2, [10, 10]));
    expect(await measureFileAsync(small, 100)).toEqual(measureFile(small));
  });

  test("hostile bytes never throw: truncations of real files and random prefixes (seeded)", () => {
    const real = [
      png(9, 9),
      wav(1),
      mp4(2),
      mp3(1),
      flac(1),
      gif(4, 4, [5, 5]),
      encodeVideo(1, 64, 64, 10, 1).bytes,
    ];
    for (const f of real) for (let n = 0; n < Math.min(f.length, 200); n++) m(f.subarray(0, n));
    fc.assert(
      fc.property(
        fc.constantFrom(
          "GIF89a",
          "\x1a\x45\xdf\xa3",
          "RIFF\0\0\0\0WAVE",
          "fLaC",
          "\0\0\0\x18ftyp",
          "ID3",
          "\xff\xfb",
          "\x89PNG",
        ),
        fc.uint8Array({ maxLength: 300 }),
        (magic, tail) => {
          const r = m(
            concat(
              Uint8Array.from(magic, (c) => c.charCodeAt(0)),
              tail,
            ),
          );
          if (r.duration !== null) expect(Number.isFinite(r.duration) && r.duration >= 0).toBe(true);
        },
      ),
      { seed: Number(process.env.FC_SEED ?? 1313), numRuns: 500 },
    );
  });
});
