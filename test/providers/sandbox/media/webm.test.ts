import { describe, expect, test } from "bun:test";
import { muxWebm, vint, type WebmFrame } from "../../../../src/providers/sandbox/media/webm.ts";

/** A parsed EBML element (written from the EBML spec, RFC 8794; no code shared with the muxer). */
interface El {
  id: number;
  /** Offset of the element's first byte, and of its data. */
  at: number;
  data: number;
  size: number;
  children?: El[];
}

const MASTER = new Set([
  0x1a45dfa3, 0x18538067, 0x114d9b74, 0x4dbb, 0x1549a966, 0x1654ae6b, 0xae, 0xe0, 0x1f43b675, 0x1c53bb6b,
  0xbb, 0xb7,
]);

function readVint(b: Uint8Array, at: number, keepMarker: boolean): [number, number] {
  const first = b[at]!;
  let len = 1;
  while (len <= 8 && !(first & (0x80 >> (len - 1)))) len++;
  if (len > 8) throw new Error(`bad vint at ${at}`);
  let v = keepMarker ? first : first & (0xff >> len);
  for (let i = 1; i < len; i++) v = v * 256 + b[at + i]!;
  return [v, len];
}

function parse(b: Uint8Array, from: number, to: number): El[] {
  const out: El[] = [];
  let p = from;
  while (p < to) {
    const [id, il] = readVint(b, p, true);
    const [size, sl] = readVint(b, p + il, false);
    const data = p + il + sl;
    if (data + size > to) throw new Error(`element ${id.toString(16)} at ${p} overruns its parent`);
    const el: El = { id, at: p, data, size };
    if (MASTER.has(id)) el.children = parse(b, data, data + size);
    out.push(el);
    p = data + size;
  }
  expect(p).toBe(to);
  return out;
}

const uintOf = (b: Uint8Array, e: El) => {
  let v = 0;
  for (let i = 0; i < e.size; i++) v = v * 256 + b[e.data + i]!;
  return v;
};
const textOf = (b: Uint8Array, e: El) => new TextDecoder().decode(b.subarray(e.data, e.data + e.size));
const child = (e: El, id: number) => e.children?.find((c) => c.id === id);
const all = (e: El, id: number) => e.children?.filter((c) => c.id === id) ?? [];

function frames(n: number, keyEvery: number, stepMs: number): WebmFrame[] {
  return Array.from({ length: n }, (_, i) => ({
    data: Uint8Array.from({ length: 5 + (i % 7) }, (_, k) => (i * 31 + k) & 255),
    timeMs: i * stepMs,
    key: i % keyEvery === 0,
  }));
}

describe("EBML variable-size integers", () => {
  test("shortest form, marker bit, reserved all-ones avoided", () => {
    expect([...vint(0)]).toEqual([0x80]);
    expect([...vint(126)]).toEqual([0xfe]);
    expect([...vint(127)]).toEqual([0x40, 0x7f]); // 0xff would mean "unknown size"
    expect([...vint(300)]).toEqual([0x41, 0x2c]);
    expect([...vint(2 ** 21)]).toEqual([0x10, 0x20, 0x00, 0x00]);
    expect(readVint(vint(123_456_789), 0, false)).toEqual([123_456_789, 4]);
    expect(() => vint(-1)).toThrow(RangeError);
  });
});

describe("muxWebm", () => {
  const input = frames(45, 20, 100);
  const bytes = muxWebm(input, {
    width: 202,
    height: 150,
    durationMs: 4525,
    frameDurationNs: 100e6,
    app: "test",
  });
  const top = parse(bytes, 0, bytes.length);

  test("EBML header: webm doc type", () => {
    expect(top.map((e) => e.id)).toEqual([0x1a45dfa3, 0x18538067]);
    const h = top[0]!;
    expect(textOf(bytes, child(h, 0x4282)!)).toBe("webm");
    expect(uintOf(bytes, child(h, 0x4286)!)).toBe(1);
    expect(uintOf(bytes, child(h, 0x4287)!)).toBeGreaterThanOrEqual(2); // SimpleBlock needs 2
  });

  const seg = top[1]!;
  test("Segment: SeekHead, Info, Tracks, one Cluster per key frame, Cues", () => {
    const ids = seg.children!.map((e) => e.id);
    expect(ids).toEqual([0x114d9b74, 0x1549a966, 0x1654ae6b, 0x1f43b675, 0x1f43b675, 0x1f43b675, 0x1c53bb6b]);
    const info = child(seg, 0x1549a966)!;
    expect(uintOf(bytes, child(info, 0x2ad7b1)!)).toBe(1_000_000);
    const dur = child(info, 0x4489)!;
    expect(dur.size).toBe(8);
    expect(new DataView(bytes.buffer, bytes.byteOffset + dur.data, 8).getFloat64(0)).toBe(4525);
    const track = child(child(seg, 0x1654ae6b)!, 0xae)!;
    expect(uintOf(bytes, child(track, 0xd7)!)).toBe(1);
    expect(uintOf(bytes, child(track, 0x83)!)).toBe(1); // video
    expect(textOf(bytes, child(track, 0x86)!)).toBe("V_VP8");
    expect(uintOf(bytes, child(track, 0x23e383)!)).toBe(100_000_000);
    const video = child(track, 0xe0)!;
    expect([uintOf(bytes, child(video, 0xb0)!), uintOf(bytes, child(video, 0xba)!)]).toEqual([202, 150]);
  });

  test("SimpleBlocks carry every frame, in order, with its time and key flag", () => {
    const got: WebmFrame[] = [];
    for (const cluster of all(seg, 0x1f43b675)) {
      const start = uintOf(bytes, child(cluster, 0xe7)!);
      const blocks = all(cluster, 0xa3);
      blocks.forEach((blk, k) => {
        const b = bytes.subarray(blk.data, blk.data + blk.size);
        expect(b[0]).toBe(0x81); // track 1
        const rel = (b[1]! << 8) | b[2]!;
        expect((b[3]! & 0x80) !== 0).toBe(k === 0); // only the cluster's first frame is a key frame
        got.push({ data: b.slice(4), timeMs: start + rel, key: (b[3]! & 0x80) !== 0 });
      });
    }
    expect(got.length).toBe(input.length);
    got.forEach((f, i) => {
      expect(f.timeMs).toBe(input[i]!.timeMs);
      expect(f.key).toBe(input[i]!.key);
      expect([...f.data]).toEqual([...input[i]!.data]);
    });
  });

  test("Cues and SeekHead point at the elements they name", () => {
    const origin = seg.data;
    const clusters = all(seg, 0x1f43b675);
    const cues = all(child(seg, 0x1c53bb6b)!, 0xbb);
    expect(cues.length).toBe(clusters.length);
    cues.forEach((cp, i) => {
      const pos = child(cp, 0xb7)!;
      expect(uintOf(bytes, child(pos, 0xf7)!)).toBe(1);
      expect(origin + uintOf(bytes, child(pos, 0xf1)!)).toBe(clusters[i]!.at);
      expect(uintOf(bytes, child(cp, 0xb3)!)).toBe(uintOf(bytes, child(clusters[i]!, 0xe7)!));
    });
    const seeks = all(child(seg, 0x114d9b74)!, 0x4dbb);
    const targets = seeks.map((s) => {
      const id = child(s, 0x53ab)!;
      return [readVint(bytes, id.data, true)[0], origin + uintOf(bytes, child(s, 0x53ac)!)];
    });
    const at = (id: number) => seg.children!.find((e) => e.id === id)!.at;
    expect(targets).toEqual([
      [0x1549a966, at(0x1549a966)],
      [0x1654ae6b, at(0x1654ae6b)],
      [0x1c53bb6b, at(0x1c53bb6b)],
    ]);
  });

  test("deterministic bytes", () => {
    const again = muxWebm(input, {
      width: 202,
      height: 150,
      durationMs: 4525,
      frameDurationNs: 100e6,
      app: "test",
    });
    expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
  });

  test("refuses what it cannot write", () => {
    const opts = { width: 10, height: 10, durationMs: 1000 };
    expect(() => muxWebm([], opts)).toThrow(RangeError);
    expect(() => muxWebm(frames(3, 2, 10).slice(1), opts)).toThrow(RangeError); // starts on an inter frame
    expect(() => muxWebm(frames(3, 1, 10), { ...opts, durationMs: 0 })).toThrow(RangeError);
    const backwards = frames(3, 1, 10)
      .reverse()
      .map((f, i) => ({ ...f, key: i === 0 || f.key }));
    expect(() => muxWebm(backwards, opts)).toThrow(RangeError);
    // No key frame for more than 30 s: a SimpleBlock offset would overflow.
    expect(() => muxWebm(frames(40, 100, 1000), { ...opts, durationMs: 40_000 })).toThrow(RangeError);
  });
});
