import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { ascii } from "../lib/bytes.ts";
import { sniffImageSize } from "../lib/image-size.ts";
import { runInThread } from "../lib/threads.ts";

/**
 * Measures delivered media from its bytes, so a job is charged for what it delivered rather than
 * for what was asked or what an upstream claims (docs/money.md, "Charge equals delivery").
 * Headers only, no decoding: pixel size of PNG, JPEG, GIF, WebP and BMP; duration of WAV, animated
 * GIF, MP4/MOV/M4A (ISO BMFF `mvhd`), WebM/Matroska (Segment Info Duration, and the video track's
 * pixel size), MP3 (Xing/Info/VBRI frame count, else constant bitrate over the audio bytes) and FLAC
 * (STREAMINFO). Anything else (Ogg, AAC in ADTS, ...) measures as unknown, and the settlement falls
 * back to the provider's declared values, then to the request.
 * Never throws on malformed input: it returns what it could read.
 */
export interface Measured {
  width: number | null;
  height: number | null;
  /** Seconds of playback, or null when the file has none (a still image) or it cannot be read. */
  duration: number | null;
  /** A still image: it has pixels and no duration by nature. */
  still: boolean;
  /** The container was recognised (false: an unknown format, nothing measured). */
  known: boolean;
}

/** Random access to a file's bytes (a buffer in memory or a file on disk). */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Uint8Array;
}

/** Largest region read in one piece (an MP4 `moov`, a whole animated GIF). */
const MAX_READ = 256 * 1024 * 1024;
const HEAD = 1024 * 1024;

export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: (offset, length) =>
      bytes.subarray(Math.max(0, offset), Math.max(0, Math.min(bytes.length, offset + length))),
  };
}

/** Measures a file on disk, reading only the regions it needs. */
export function measureFile(path: string): Measured {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    return measureMedia({
      size,
      read(offset, length) {
        const start = Math.max(0, offset);
        const n = Math.max(0, Math.min(length, size - start));
        const buf = new Uint8Array(n);
        let got = 0;
        while (got < n) {
          const r = readSync(fd, buf, got, n - got, start + got);
          if (r <= 0) break;
          got += r;
        }
        return buf.subarray(0, got);
      },
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Files up to this size are measured on the calling thread. Above it a measure may read a lot in
 * one piece (a whole animated GIF, up to 256 MiB: 70-145 ms for 200 MB on the 2-core build machine),
 * so it runs in a worker thread (src/entries/measure-file.ts) and no request waits behind it.
 */
export const MEASURE_INLINE_BYTES = 16 * 1024 * 1024;

/** measureFile for a file of `size` bytes, off the event loop when it is large (see above). */
export async function measureFileAsync(path: string, size: number): Promise<Measured> {
  if (size <= MEASURE_INLINE_BYTES) return measureFile(path);
  return await runInThread<string, Measured>("measure-file", path);
}

const UNKNOWN: Measured = { width: null, height: null, duration: null, still: false, known: false };

export function measureMedia(src: ByteSource): Measured {
  try {
    const head = src.read(0, Math.min(src.size, HEAD));
    if (head.length < 12) return UNKNOWN;
    const tag = ascii(head, 0, 4);
    if (tag === "GIF8") return measureGif(src);
    if (tag === "RIFF" && ascii(head, 8, 4) === "WAVE") return timed(wavSeconds(head, src.size));
    if (tag === "fLaC") return timed(flacSeconds(head));
    if (isIsoBmff(head)) return timed(mp4Seconds(src));
    if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3)
      return measureWebm(head);
    const image =
      sniffImageSize(head) ??
      (src.size > head.length ? sniffImageSize(src.read(0, Math.min(src.size, 16 * HEAD))) : null);
    if (image) return { width: image.width, height: image.height, duration: null, still: true, known: true };
    if (tag.startsWith("ID3") || isMp3Frame(head, 0)) return timed(mp3Seconds(src, head));
    return UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}

const timed = (duration: number | null): Measured => ({
  width: null,
  height: null,
  duration: duration !== null && Number.isFinite(duration) && duration >= 0 ? duration : null,
  still: false,
  known: true,
});

const u16le = (b: Uint8Array, o: number) => b[o]! | (b[o + 1]! << 8);
const u32le = (b: Uint8Array, o: number) =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const u32be = (b: Uint8Array, o: number) =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

/** Duration of a PCM WAV from its header: data bytes / byte rate (a streaming size of 0 or ~0 means "to the end"). */
export function wavSeconds(head: Uint8Array, fileSize = head.length): number | null {
  if (head.length < 12 || ascii(head, 0, 4) !== "RIFF" || ascii(head, 8, 4) !== "WAVE") return null;
  let at = 12;
  let byteRate = 0;
  while (at + 8 <= head.length) {
    const id = ascii(head, at, 4);
    const size = u32le(head, at + 4);
    if (id === "fmt " && at + 20 <= head.length) byteRate = u32le(head, at + 16);
    if (id === "data") {
      const available = Math.max(0, fileSize - at - 8);
      const bytes = size === 0 || size === 0xffffffff ? available : Math.min(size, available);
      return byteRate > 0 ? bytes / byteRate : null;
    }
    at += 8 + size + (size % 2);
  }
  return null;
}

/** Pixel size, and for animations (2+ frames) the sum of the frame delays. */
function measureGif(src: ByteSource): Measured {
  const b = src.read(0, Math.min(src.size, MAX_READ));
  if (b.length < 13) return UNKNOWN;
  const width = u16le(b, 6);
  const height = u16le(b, 8);
  let p = 13;
  if (b[10]! & 0x80) p += 3 * 2 ** ((b[10]! & 7) + 1);
  let frames = 0;
  let delayCs = 0;
  let pendingDelay = 0;
  const skipSubBlocks = () => {
    while (p < b.length) {
      const n = b[p]!;
      p += 1 + n;
      if (n === 0) return;
    }
  };
  while (p < b.length) {
    const block = b[p]!;
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      const label = b[p + 1];
      if (label === 0xf9 && p + 6 <= b.length) pendingDelay = u16le(b, p + 4);
      p += 2;
      skipSubBlocks();
    } else if (block === 0x2c) {
      if (p + 10 > b.length) break;
      const packed = b[p + 9]!;
      p += 10;
      if (packed & 0x80) p += 3 * 2 ** ((packed & 7) + 1);
      p += 1; // LZW minimum code size
      skipSubBlocks();
      frames++;
      delayCs += pendingDelay;
      pendingDelay = 0;
    } else break; // malformed: keep what was read
  }
  const size = width >= 1 && height >= 1 ? { width, height } : { width: null, height: null };
  if (frames <= 1) return { ...size, duration: null, still: true, known: true };
  return { ...size, duration: delayCs > 0 ? delayCs / 100 : null, still: false, known: true };
}

/** An EBML element header at `at`: id (with its marker bits), data size (null: unknown), data offset. */
function ebmlElement(b: Uint8Array, at: number): { id: number; size: number | null; data: number } | null {
  const vint = (p: number, keepMarker: boolean): { value: number; len: number; allOnes: boolean } | null => {
    const first = b[p];
    if (first === undefined || first === 0) return null;
    let len = 1;
    while (!(first & (0x80 >> (len - 1)))) len++;
    if (p + len > b.length) return null;
    let value = keepMarker ? first : first & (0xff >> len);
    let allOnes = (first & (0xff >> len)) === 0xff >> len;
    for (let i = 1; i < len; i++) {
      value = value * 256 + b[p + i]!;
      if (b[p + i] !== 0xff) allOnes = false;
    }
    return { value, len, allOnes };
  };
  const id = vint(at, true);
  if (!id || id.len > 4) return null;
  const size = vint(at + id.len, false);
  if (!size) return null;
  return { id: id.value, size: size.allOnes ? null : size.value, data: at + id.len + size.len };
}

/**
 * WebM/Matroska: Segment > Info (TimecodeScale, Duration) and the first video TrackEntry's
 * PixelWidth/PixelHeight, read from the file's head (they precede the clusters). Unknown when
 * neither is found.
 */
function measureWebm(b: Uint8Array): Measured {
  const header = ebmlElement(b, 0);
  if (!header || header.size === null) return UNKNOWN;
  const segment = ebmlElement(b, header.data + header.size);
  if (segment?.id !== 0x18538067) return UNKNOWN;
  const end = segment.size === null ? b.length : Math.min(b.length, segment.data + segment.size);
  const children = function* (from: number, to: number) {
    let p = from;
    while (p < to) {
      const e = ebmlElement(b, p);
      if (!e) return;
      yield e;
      if (e.size === null) return;
      p = e.data + e.size;
    }
  };
  const uint = (e: { data: number; size: number | null }) => {
    let v = 0;
    for (let i = 0; i < (e.size ?? 0) && i < 8; i++) v = v * 256 + (b[e.data + i] ?? 0);
    return v;
  };
  let scale = 1_000_000;
  let duration: number | null = null;
  let width: number | null = null;
  let height: number | null = null;
  for (const e of children(segment.data, end)) {
    if (e.id === 0x1f43b675) break; // a Cluster: the headers are behind
    if (e.size === null || e.data + e.size > b.length) break;
    if (e.id === 0x1549a966) {
      for (const f of children(e.data, e.data + e.size)) {
        if (f.id === 0x2ad7b1 && f.size) scale = uint(f);
        else if (f.id === 0x4489 && (f.size === 4 || f.size === 8) && f.data + f.size <= b.length) {
          const view = new DataView(b.buffer, b.byteOffset + f.data, f.size);
          duration = f.size === 8 ? view.getFloat64(0) : view.getFloat32(0);
        }
      }
    } else if (e.id === 0x1654ae6b && width === null) {
      for (const t of children(e.data, e.data + e.size)) {
        if (t.id !== 0xae || t.size === null) continue;
        for (const f of children(t.data, t.data + t.size)) {
          if (f.id !== 0xe0 || f.size === null) continue;
          for (const g of children(f.data, f.data + f.size)) {
            if (g.id === 0xb0) width = uint(g);
            else if (g.id === 0xba) height = uint(g);
          }
        }
        if (width !== null && height !== null) break;
      }
    }
  }
  const seconds =
    duration !== null && Number.isFinite(duration) && duration >= 0 ? (duration * scale) / 1e9 : null;
  const sized = width !== null && height !== null && width > 0 && height > 0;
  if (seconds === null && !sized) return UNKNOWN;
  return {
    width: sized ? width : null,
    height: sized ? height : null,
    duration: seconds,
    still: false,
    known: true,
  };
}

/** STREAMINFO: total samples / sample rate (0 total samples means unknown). */
function flacSeconds(b: Uint8Array): number | null {
  if (b.length < 26 || (b[4]! & 0x7f) !== 0) return null;
  const rate = (b[18]! << 12) | (b[19]! << 4) | (b[20]! >> 4);
  const total = (b[21]! & 0x0f) * 2 ** 32 + u32be(b, 22);
  return rate > 0 && total > 0 ? total / rate : null;
}

const BMFF_FIRST = new Set(["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "styp"]);
const isIsoBmff = (b: Uint8Array) => BMFF_FIRST.has(ascii(b, 4, 4));

/** ISO BMFF (MP4, MOV, M4A): moov/mvhd duration / timescale, else moov/mvex/mehd for fragmented files. */
function mp4Seconds(src: ByteSource): number | null {
  let at = 0;
  while (at + 8 <= src.size) {
    const h = src.read(at, 16);
    if (h.length < 8) return null;
    let size = u32be(h, 0);
    const type = ascii(h, 4, 4);
    let header = 8;
    if (size === 1) {
      if (h.length < 16) return null;
      size = u32be(h, 8) * 2 ** 32 + u32be(h, 12);
      header = 16;
    } else if (size === 0) size = src.size - at;
    if (size < header) return null;
    if (type === "moov") {
      if (size > MAX_READ) return null;
      const moov = src.read(at + header, size - header);
      return movieSeconds(moov);
    }
    at += size;
  }
  return null;
}

function* boxes(b: Uint8Array): Generator<{ type: string; body: Uint8Array }> {
  let at = 0;
  while (at + 8 <= b.length) {
    let size = u32be(b, at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > b.length) return;
      size = u32be(b, at + 8) * 2 ** 32 + u32be(b, at + 12);
      header = 16;
    } else if (size === 0) size = b.length - at;
    if (size < header || at + size > b.length) return;
    yield { type: ascii(b, at + 4, 4), body: b.subarray(at + header, at + size) };
    at += size;
  }
}

/** Duration field of an mvhd or mehd full box body (version 0: 32-bit, version 1: 64-bit). */
function movieSeconds(moov: Uint8Array): number | null {
  let timescale = 0;
  let duration = 0;
  for (const box of boxes(moov)) {
    const b = box.body;
    if (box.type === "mvhd" && b.length >= 20) {
      if (b[0] === 1) {
        if (b.length < 32) return null;
        timescale = u32be(b, 20);
        duration = u32be(b, 24) * 2 ** 32 + u32be(b, 28);
        if (u32be(b, 24) === 0xffffffff && u32be(b, 28) === 0xffffffff) duration = 0;
      } else {
        timescale = u32be(b, 12);
        duration = u32be(b, 16);
        if (duration === 0xffffffff) duration = 0;
      }
    } else if (box.type === "mvex" && duration === 0) {
      for (const inner of boxes(b)) {
        if (inner.type !== "mehd") continue;
        const m = inner.body;
        duration =
          m[0] === 1 && m.length >= 12
            ? u32be(m, 4) * 2 ** 32 + u32be(m, 8)
            : m.length >= 8
              ? u32be(m, 4)
              : 0;
      }
    }
  }
  return timescale > 0 && duration > 0 ? duration / timescale : null;
}

// MPEG audio: bitrates (kbit/s) by [version is MPEG-1][layer index 1..3] and sample rates by version.
const BITRATES: Record<string, number[]> = {
  "1-1": [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  "1-2": [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  "1-3": [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  "2-1": [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  "2-2": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  "2-3": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000],
};

interface MpegFrame {
  mpeg1: boolean;
  layer: 1 | 2 | 3;
  bitrate: number;
  sampleRate: number;
  mono: boolean;
  samples: number;
}

function mpegFrame(b: Uint8Array, o: number): MpegFrame | null {
  if (o + 4 > b.length || b[o] !== 0xff || (b[o + 1]! & 0xe0) !== 0xe0) return null;
  const version = (b[o + 1]! >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
  const layerBits = (b[o + 1]! >> 1) & 3;
  const bitrateIdx = b[o + 2]! >> 4;
  const rateIdx = (b[o + 2]! >> 2) & 3;
  if (version === 1 || layerBits === 0 || bitrateIdx === 0 || bitrateIdx === 15 || rateIdx === 3) return null;
  const layer = (4 - layerBits) as 1 | 2 | 3;
  const mpeg1 = version === 3;
  const bitrate = BITRATES[`${mpeg1 ? 1 : 2}-${layer}`]![bitrateIdx]! * 1000;
  const sampleRate = RATES[version]![rateIdx]!;
  const samples = layer === 1 ? 384 : layer === 2 || mpeg1 ? 1152 : 576;
  return { mpeg1, layer, bitrate, sampleRate, mono: b[o + 3]! >> 6 === 3, samples };
}

const isMp3Frame = (b: Uint8Array, o: number) => mpegFrame(b, o) !== null;

/** Xing/Info or VBRI frame count when present, else constant bitrate over the audio bytes. */
function mp3Seconds(src: ByteSource, head: Uint8Array): number | null {
  let start = 0;
  if (ascii(head, 0, 3) === "ID3" && head.length >= 10) {
    const size =
      ((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | (head[9]! & 0x7f);
    start = 10 + size + (head[5]! & 0x10 ? 10 : 0);
  }
  const b = src.read(start, 64 * 1024);
  let o = 0;
  while (o + 4 <= b.length && !mpegFrame(b, o)) o++;
  const f = mpegFrame(b, o);
  if (!f) return null;
  const side = f.mpeg1 ? (f.mono ? 17 : 32) : f.mono ? 9 : 17;
  const xing = o + 4 + side;
  const tag = ascii(b, xing, 4);
  if ((tag === "Xing" || tag === "Info") && xing + 12 <= b.length && u32be(b, xing + 4) & 1) {
    const frames = u32be(b, xing + 8);
    return frames > 0 ? (frames * f.samples) / f.sampleRate : null;
  }
  if (ascii(b, o + 36, 4) === "VBRI" && o + 50 <= b.length) {
    const frames = u32be(b, o + 36 + 14);
    return frames > 0 ? (frames * f.samples) / f.sampleRate : null;
  }
  const tail = src.size >= 128 ? src.read(src.size - 128, 3) : new Uint8Array(0);
  const audio = src.size - start - o - (ascii(tail, 0, 3) === "TAG" ? 128 : 0);
  return audio > 0 ? (audio * 8) / f.bitrate : null;
}
