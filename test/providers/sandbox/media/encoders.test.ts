import { describe, expect, test } from "bun:test";
import { crc32, inflateSync } from "node:zlib";
import { readPngSize } from "../../../../src/lib/image-size.ts";
import {
  animationSize,
  encodeAnimation,
  encodePng,
  encodeSpeechWav,
} from "../../../../src/providers/sandbox/media/index.ts";

/** Independent GIF LZW decoder (GIF89a appendix F), to prove the encoder's stream is decodable. */
function lzwDecode(data: Uint8Array, minCodeSize: number, expected: number): Uint8Array {
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  let size = minCodeSize + 1;
  let dict: number[][] = [];
  const reset = () => {
    dict = [];
    for (let i = 0; i < clear; i++) dict[i] = [i];
    dict[clear] = [];
    dict[eoi] = [];
    size = minCodeSize + 1;
  };
  reset();
  const out: number[] = [];
  let bitPos = 0;
  let prev: number[] | null = null;
  const read = () => {
    let code = 0;
    for (let i = 0; i < size; i++, bitPos++) code |= ((data[bitPos >> 3]! >> (bitPos & 7)) & 1) << i;
    return code;
  };
  for (;;) {
    const code = read();
    if (code === clear) {
      reset();
      prev = null;
      continue;
    }
    if (code === eoi) break;
    let entry: number[];
    if (code < dict.length) entry = dict[code]!;
    else if (prev) entry = [...prev, prev[0]!];
    else throw new Error("bad code");
    out.push(...entry);
    if (prev && dict.length < 4096) dict.push([...prev, entry[0]!]);
    if (dict.length === 1 << size && size < 12) size++;
    prev = entry;
  }
  expect(out.length).toBe(expected);
  return Uint8Array.from(out);
}

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

describe("animated GIF", () => {
  test("frames, delays summing to the duration, loop extension, decodable frames", () => {
    const anim = encodeAnimation(2.5, 1280, 720, 10, 4);
    const g = anim.bytes;
    expect(String.fromCharCode(...g.subarray(0, 6))).toBe("GIF89a");
    const w = g[6]! | (g[7]! << 8);
    const h = g[8]! | (g[9]! << 8);
    const size = animationSize(1280, 720);
    expect([w, h]).toEqual([size.width, size.height]);
    expect(String.fromCharCode(...g.subarray(13 + 768 + 3, 13 + 768 + 14))).toBe("NETSCAPE2.0");
    let at = 13 + 768 + 19;
    const skipSubBlocks = () => {
      while (g[at] !== 0) at += 1 + g[at]!;
      at++;
    };
    let frames = 0;
    let delayCs = 0;
    while (g[at] !== 0x3b) {
      if (g[at] === 0x21 && g[at + 1] === 0xf9) {
        delayCs += g[at + 4]! | (g[at + 5]! << 8);
        at += 8;
      } else if (g[at] === 0x21) {
        at += 2; // other extensions (the comment): skip their sub-blocks
        skipSubBlocks();
      } else if (g[at] === 0x2c) {
        // Frame 0 covers the screen; later frames are the changed rectangle only.
        const fw = g[at + 5]! | (g[at + 6]! << 8);
        const fh = g[at + 7]! | (g[at + 8]! << 8);
        if (frames === 0) expect([fw, fh]).toEqual([w, h]);
        const min = g[at + 10]!;
        at += 11;
        const parts: number[] = [];
        while (g[at] !== 0) {
          parts.push(...g.subarray(at + 1, at + 1 + g[at]!));
          at += 1 + g[at]!;
        }
        at++;
        if (frames < 3) lzwDecode(Uint8Array.from(parts), min, fw * fh);
        frames++;
      } else throw new Error(`unexpected block ${g[at]} at ${at}`);
    }
    expect(frames).toBe(anim.frames);
    expect(frames).toBe(25);
    expect(delayCs).toBe(250);
  });

  test("bad arguments are refused", () => {
    expect(() => encodeAnimation(0, 100, 100, 10, 1)).toThrow(RangeError);
    expect(() => encodeAnimation(1, 0, 100, 10, 1)).toThrow(RangeError);
    expect(() => encodeAnimation(1, 100, 100, 0, 1)).toThrow(RangeError);
    expect(() => encodeAnimation(1, 100, 100, 61, 1)).toThrow(RangeError);
  });
});
