import { describe, expect, test } from "bun:test";
import { crc32, inflateSync } from "node:zlib";
import { readPngSize } from "../../../../src/lib/image-size.ts";
import { encodePng, encodeSpeechWav } from "../../../../src/providers/sandbox/media/index.ts";

describe("PNG", () => {
  test("valid chunks with correct CRCs, the requested size, decodable scanlines", () => {
    const png = encodePng(37, 21, 5);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const v = new DataView(png.buffer, png.byteOffset);
    let at = 8;
    const types: string[] = [];
    const idat: Uint8Array[] = [];
    let bpp = 0;
    while (at < png.length) {
      const len = v.getUint32(at);
      const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
      const body = png.subarray(at + 8, at + 8 + len);
      expect(v.getUint32(at + 8 + len)).toBe(crc32(png.subarray(at + 4, at + 8 + len)));
      if (type === "IHDR") {
        expect(new DataView(body.buffer, body.byteOffset).getUint32(0)).toBe(37);
        expect(new DataView(body.buffer, body.byteOffset).getUint32(4)).toBe(21);
        bpp = body[9] === 6 ? 4 : 3;
      }
      if (type === "IDAT") idat.push(body);
      types.push(type);
      at += 12 + len;
    }
    expect(types[0]).toBe("IHDR");
    expect(types.at(-1)).toBe("IEND");
    const raw = inflateSync(Buffer.concat(idat));
    expect(raw.length).toBe(21 * (1 + 37 * bpp));
    for (let y = 0; y < 21; y++) expect(raw[y * (1 + 37 * bpp)]!).toBeLessThanOrEqual(4);
    expect(readPngSize(png)).toEqual({ width: 37, height: 21 });
  });

  test("deterministic per seed; garbage is not a PNG", () => {
    expect(encodePng(16, 16, 1)).toEqual(encodePng(16, 16, 1));
    expect(encodePng(16, 16, 1)).not.toEqual(encodePng(16, 16, 2));
    expect(readPngSize(new Uint8Array([1, 2, 3]))).toBeNull();
    expect(readPngSize(encodePng(16, 16, 1).subarray(0, 20))).toBeNull();
  });
});

describe("WAV", () => {
  test("RIFF header and sample count match the duration exactly", () => {
    const wav = encodeSpeechWav(3, 9);
    const v = new DataView(wav.buffer, wav.byteOffset);
    const text = (at: number) => String.fromCharCode(...wav.subarray(at, at + 4));
    expect(text(0)).toBe("RIFF");
    expect(v.getUint32(4, true)).toBe(wav.length - 8);
    expect(text(8)).toBe("WAVE");
    expect(v.getUint16(20, true)).toBe(1);
    expect(v.getUint16(22, true)).toBe(1);
    const rate = v.getUint32(24, true);
    expect(v.getUint16(34, true)).toBe(16);
    expect(text(36)).toBe("data");
    expect(v.getUint32(40, true)).toBe(rate * 3 * 2);
  });

  test("speech-like: loud syllables and quiet pauses, not silence or a constant tone", () => {
    const wav = encodeSpeechWav(5, 3);
    const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
    const windows: number[] = [];
    for (let i = 0; i + 1600 <= pcm.length; i += 1600) {
      let sum = 0;
      for (let j = i; j < i + 1600; j++) sum += pcm[j]! * pcm[j]!;
      windows.push(Math.sqrt(sum / 1600));
    }
    const loud = Math.max(...windows);
    expect(loud).toBeGreaterThan(1000);
    expect(windows.filter((w) => w < loud * 0.05).length).toBeGreaterThan(2); // pauses
    expect(windows.filter((w) => w > loud * 0.3).length).toBeGreaterThan(5); // speech
  });

  test("bad durations are refused", () => {
    expect(() => encodeSpeechWav(0, 1)).toThrow(RangeError);
    expect(() => encodeSpeechWav(601, 1)).toThrow(RangeError);
  });
});
