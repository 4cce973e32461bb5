import { describe, expect, test } from "bun:test";
import {
  encodeSpeechWav,
  MAX_SPEECH_SECONDS,
  planSpeech,
  SPEECH_SAMPLE_RATE,
} from "../../../../src/providers/sandbox/media/index.ts";
import { decodeWav } from "./decoders.ts";

function windowRms(s: Int16Array, size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i + size <= s.length; i += size) {
    let q = 0;
    for (let j = 0; j < size; j++) q += s[i + j]! ** 2;
    out.push(Math.sqrt(q / size));
  }
  return out;
}

describe("encodeSpeechWav", () => {
  test.each([
    [1, 16000],
    [2.5, 16000],
    [30, 16000],
    [0.001, 16000],
    [1.3, 22050],
    [0.7, 8000],
    [3, 44100],
    [2, 48000],
  ])("%ss at %i Hz: header and sample count are exact", (d, sr) => {
    const bytes = encodeSpeechWav(d, 7, { sampleRate: sr });
    const wav = decodeWav(bytes);
    const n = Math.round(d * sr);
    expect(wav.format).toBe(1);
    expect(wav.channels).toBe(1);
    expect(wav.sampleRate).toBe(sr);
    expect(wav.bitsPerSample).toBe(16);
    expect(wav.blockAlign).toBe(2);
    expect(wav.byteRate).toBe(sr * 2);
    expect(wav.fmtSize).toBe(16);
    expect(wav.dataSize).toBe(n * 2);
    expect(wav.riffSize).toBe(bytes.length - 8);
    expect(bytes.length).toBe(44 + n * 2);
    expect(wav.samples.length).toBe(n);
  });

  test("defaults to 16 kHz", () => {
    expect(decodeWav(encodeSpeechWav(1, 1)).sampleRate).toBe(SPEECH_SAMPLE_RATE);
    expect(SPEECH_SAMPLE_RATE).toBe(16000);
  });

  test.each([1, 2, "hello", 99])("seed %p: loud, varied, normalised, with pauses and syllables", (seed) => {
    const sr = 16000;
    const { samples } = decodeWav(encodeSpeechWav(10, seed));
    let sum = 0;
    let peak = 0;
    const distinct = new Set<number>();
    for (const v of samples) {
      sum += v * v;
      peak = Math.max(peak, Math.abs(v));
      distinct.add(v);
    }
    expect(Math.sqrt(sum / samples.length)).toBeGreaterThan(800); // not silent
    expect(distinct.size).toBeGreaterThan(2000); // not constant, not a square wave
    expect(peak).toBeGreaterThan(20000); // normalised...
    expect(peak).toBeLessThanOrEqual(32767); // ...without clipping
    // Fades: first and last samples are near zero (no clicks).
    expect(Math.abs(samples[0]!)).toBeLessThan(200);
    expect(Math.abs(samples[samples.length - 1]!)).toBeLessThan(200);

    // Pauses: 20 ms windows; a good share are near-silent, a good share are loud.
    const rms = windowRms(samples, sr / 50);
    const max = Math.max(...rms);
    const quiet = rms.filter((r) => r < 0.03 * max).length / rms.length;
    const loud = rms.filter((r) => r > 0.25 * max).length / rms.length;
    expect(quiet).toBeGreaterThan(0.1);
    expect(loud).toBeGreaterThan(0.2);

    // Syllabic rhythm: the 10 ms envelope rises through 30% of its maximum 2..9 times a second.
    const env = windowRms(samples, sr / 100);
    const envMax = Math.max(...env);
    let rises = 0;
    let above = false;
    for (const e of env) {
      if (!above && e > 0.3 * envMax) {
        rises++;
        above = true;
      } else if (above && e < 0.15 * envMax) {
        above = false;
      }
    }
    expect(rises / 10).toBeGreaterThan(1.5);
    expect(rises / 10).toBeLessThan(9);

    // Voicing: most of the ten loudest 40 ms windows are periodic at a speaking pitch
    // (normalised autocorrelation peak above 0.8 at a lag of 70-320 Hz).
    const win = sr / 25;
    const windows: { at: number; energy: number }[] = [];
    for (let i = 0; i + win <= samples.length; i += win / 2) {
      let e = 0;
      for (let j = 0; j < win; j++) e += samples[i + j]! ** 2;
      windows.push({ at: i, energy: e });
    }
    windows.sort((a, b) => b.energy - a.energy);
    let periodic = 0;
    for (const { at } of windows.slice(0, 10)) {
      let bestCorr = 0;
      for (let lag = Math.floor(sr / 320); lag <= Math.ceil(sr / 70); lag++) {
        let num = 0;
        let d1 = 0;
        let d2 = 0;
        for (let j = 0; j + lag < win; j++) {
          const a = samples[at + j]!;
          const b = samples[at + j + lag]!;
          num += a * b;
          d1 += a * a;
          d2 += b * b;
        }
        bestCorr = Math.max(bestCorr, num / Math.sqrt(d1 * d2 + 1));
      }
      if (bestCorr > 0.8) periodic++;
    }
    expect(periodic).toBeGreaterThanOrEqual(6);
  });

  test("deterministic per seed and text; different seeds or texts differ", () => {
    const a = encodeSpeechWav(3, "voice-a");
    expect(Buffer.from(encodeSpeechWav(3, "voice-a")).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(encodeSpeechWav(3, "voice-b")).equals(Buffer.from(a))).toBe(false);
    const t1 = encodeSpeechWav(3, 1, { text: "Hello world. How are you?" });
    const t2 = encodeSpeechWav(3, 1, { text: "Completely different words here, friend!" });
    expect(
      Buffer.from(encodeSpeechWav(3, 1, { text: "Hello world. How are you?" })).equals(Buffer.from(t1)),
    ).toBe(true);
    expect(Buffer.from(t2).equals(Buffer.from(t1))).toBe(false);
  });

  test("text of any script, or with nothing speakable, still gives speech", () => {
    for (const text of [
      "こんにちは世界、元気ですか？",
      "12345 67890",
      "...,,,!!!",
      "",
      "Zażółć gęślą jaźń",
    ]) {
      const { samples } = decodeWav(encodeSpeechWav(4, 3, { text }));
      let sum = 0;
      for (const v of samples) sum += v * v;
      expect(Math.sqrt(sum / samples.length)).toBeGreaterThan(500);
    }
  });

  test("bad arguments throw RangeError", () => {
    for (const d of [0, -1, MAX_SPEECH_SECONDS + 0.001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => encodeSpeechWav(d, 1)).toThrow(RangeError);
    }
    expect(() => encodeSpeechWav(1, 1, { sampleRate: 12345 })).toThrow(RangeError);
    expect(() => encodeSpeechWav(1, 1, { sampleRate: 0 })).toThrow(RangeError);
  });

  test("the longest duration is accepted and exact", () => {
    const bytes = encodeSpeechWav(MAX_SPEECH_SECONDS, 1, { sampleRate: 8000 });
    expect(decodeWav(bytes).samples.length).toBe(MAX_SPEECH_SECONDS * 8000);
  });
});

describe("planSpeech", () => {
  test("tracks cover the duration with pauses and voiced stretches", () => {
    const plan = planSpeech(5, 1);
    expect(plan.frames).toBeGreaterThanOrEqual(5 / plan.frameSeconds);
    const silent = plan.voice.filter((v, i) => v < 0.01 && plan.noise[i]! < 0.01).length;
    expect(silent / plan.frames).toBeGreaterThan(0.1);
    expect(plan.voice.filter((v) => v > 0.5).length / plan.frames).toBeGreaterThan(0.15);
    for (const f of plan.f0) {
      expect(f).toBeGreaterThan(60);
      expect(f).toBeLessThan(400);
    }
  });
});
