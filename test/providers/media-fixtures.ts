import { encodePng, encodeSpeechWav } from "../../src/providers/sandbox/media/index.ts";

/**
 * Small real media files of known size and duration, for settlement tests: the gateway must
 * charge what these measure, whatever the upstream claims.
 */

export const png = (width: number, height: number, seed = 1) => encodePng(width, height, seed);
export const wav = (seconds: number, seed = 1) => encodeSpeechWav(seconds, seed);

/**
 * A GIF89a of `delaysCs.length` frames (one per delay, in centiseconds), each a 1-pixel image
 * coded with a minimal LZW stream, on a `width x height` screen: enough for header readers.
 */
export function gif(width: number, height: number, delaysCs: number[]): Uint8Array {
  const out: number[] = [...new TextEncoder().encode("GIF89a")];
  out.push(width & 255, width >> 8, height & 255, height >> 8, 0x80, 0, 0); // 2-colour global table
  out.push(0, 0, 0, 255, 255, 255);
  for (const d of delaysCs) {
    out.push(0x21, 0xf9, 4, 0, d & 255, d >> 8, 0, 0); // graphic control extension: the delay
    out.push(0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0); // image descriptor: 1x1 at 0,0
    out.push(2, 2, 0x44, 0x01, 0); // LZW: clear, index 0, end
  }
  out.push(0x3b);
  return Uint8Array.from(out);
}

/**
 * A 1x1 GIF89a of about `bytes` bytes: two frames of `delayCs` each, the first one's image data
 * padded with full 255-byte sub-blocks, so a reader must walk the whole file to find the second.
 */
export function largeGif(bytes: number, delayCs: number): Uint8Array {
  const out = new Uint8Array(bytes + 64);
  const head = [...gif(1, 1, [])].slice(0, -1); // without the trailer
  out.set(head, 0);
  let p = head.length;
  for (let frame = 0; frame < 2; frame++) {
    out.set([0x21, 0xf9, 4, 0, delayCs & 255, delayCs >> 8, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2], p);
    p += 19;
    const end = frame === 0 ? bytes - 40 : p;
    while (p + 256 <= end) {
      out[p] = 255;
      p += 256;
    }
    out[p++] = 0; // the frame's last sub-block
  }
  out[p++] = 0x3b;
  return out.subarray(0, p);
}

function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const size = 8 + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, size);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  let at = 8;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** An ISO BMFF (MP4) file whose movie header says `seconds` (timescale 1000; version 1 for 64-bit fields). */
export function mp4(seconds: number, opts: { version?: 0 | 1; fragmented?: boolean } = {}): Uint8Array {
  const ftyp = box("ftyp", new TextEncoder().encode("isom\0\0\x02\0isomiso2mp41"));
  const ticks = Math.round(seconds * 1000);
  let mvhd: Uint8Array;
  if (opts.version === 1) {
    const b = new Uint8Array(112);
    const v = new DataView(b.buffer);
    b[0] = 1;
    v.setUint32(20, 1000);
    v.setUint32(24, Math.floor(ticks / 2 ** 32));
    v.setUint32(28, opts.fragmented ? 0 : ticks >>> 0);
    mvhd = box("mvhd", b);
  } else {
    const b = new Uint8Array(100);
    const v = new DataView(b.buffer);
    v.setUint32(12, 1000);
    v.setUint32(16, opts.fragmented ? 0 : ticks);
    mvhd = box("mvhd", b);
  }
  const parts = [mvhd];
  if (opts.fragmented) {
    const mehd = new Uint8Array(8);
    new DataView(mehd.buffer).setUint32(4, ticks);
    parts.push(box("mvex", box("mehd", mehd)));
  }
  return concat(ftyp, box("moov", ...parts), box("mdat", new Uint8Array(64)));
}

/** A constant-bitrate MP3 (MPEG-1 layer III, 128 kbit/s, 44.1 kHz, stereo) of about `seconds`. */
export function mp3(seconds: number, id3 = true): Uint8Array {
  const frameBytes = 417; // 144 x 128000 / 44100, no padding
  const frames = Math.round((seconds * 44100) / 1152);
  const body = new Uint8Array(frames * frameBytes);
  for (let f = 0; f < frames; f++) body.set([0xff, 0xfb, 0x90, 0x00], f * frameBytes);
  const tag = id3
    ? Uint8Array.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 20, ...new Array(20).fill(0)])
    : new Uint8Array(0);
  return concat(tag, body);
}

/** A FLAC stream header (STREAMINFO) announcing `seconds` at 48 kHz. */
export function flac(seconds: number): Uint8Array {
  const b = new Uint8Array(42 + 16);
  b.set([0x66, 0x4c, 0x61, 0x43, 0x80, 0, 0, 34]);
  const rate = 48000;
  const total = Math.round(seconds * rate);
  b[18] = (rate >> 12) & 0xff;
  b[19] = (rate >> 4) & 0xff;
  b[20] = ((rate & 0xf) << 4) | (1 << 1); // 2 channels - 1 = 1, in bits 3..1
  b[21] = 0x70 | Math.floor(total / 2 ** 32); // 16 bits per sample - 1, high bits of the total
  new DataView(b.buffer).setUint32(22, total >>> 0);
  return b;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Serves files by path on 127.0.0.1 (an upstream's CDN): put() returns the URL. */
export function startMediaHost() {
  const files = new Map<string, { bytes: Uint8Array; type: string }>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const f = files.get(new URL(req.url).pathname);
      return f
        ? new Response(f.bytes, { headers: { "content-type": f.type } })
        : new Response("no", { status: 404 });
    },
  });
  return {
    put(path: string, bytes: Uint8Array, type: string): string {
      files.set(path, { bytes, type });
      return `http://127.0.0.1:${server.port}${path}`;
    },
    stop: () => server.stop(true),
  };
}
