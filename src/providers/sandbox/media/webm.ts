import { concatBytes } from "../../../lib/bytes.ts";

/**
 * A WebM (Matroska subset) muxer for one VP8 video track, written whole in memory:
 * EBML header (DocType webm), then a Segment of known size holding a SeekHead (pointing at Info,
 * Tracks and Cues), Info (TimecodeScale 1 ms, Duration in ms), Tracks (one V_VP8 track with its
 * pixel size), one Cluster per key frame (SimpleBlocks, key-frame flag set on key frames) and
 * Cues (one CuePoint per cluster) so players can seek without scanning.
 * Element ids and layout: Matroska / WebM specifications (RFC 9559).
 */

export interface WebmFrame {
  /** One compressed VP8 frame. */
  data: Uint8Array;
  /** Presentation time in milliseconds (non-decreasing). */
  timeMs: number;
  key: boolean;
}

export interface WebmOptions {
  width: number;
  height: number;
  /** Total duration in milliseconds (Info/Duration); frames must start before it. */
  durationMs: number;
  /** Nominal frame duration in nanoseconds (TrackEntry/DefaultDuration), if constant. */
  frameDurationNs?: number;
  /** MuxingApp and WritingApp. */
  app?: string;
}

// Element ids (with their length marker bits, as written).
export const EBML_IDS = {
  EBML: 0x1a45dfa3,
  EBMLVersion: 0x4286,
  EBMLReadVersion: 0x42f7,
  EBMLMaxIDLength: 0x42f2,
  EBMLMaxSizeLength: 0x42f3,
  DocType: 0x4282,
  DocTypeVersion: 0x4287,
  DocTypeReadVersion: 0x4285,
  Segment: 0x18538067,
  SeekHead: 0x114d9b74,
  Seek: 0x4dbb,
  SeekID: 0x53ab,
  SeekPosition: 0x53ac,
  Info: 0x1549a966,
  TimecodeScale: 0x2ad7b1,
  Duration: 0x4489,
  MuxingApp: 0x4d80,
  WritingApp: 0x5741,
  Tracks: 0x1654ae6b,
  TrackEntry: 0xae,
  TrackNumber: 0xd7,
  TrackUID: 0x73c5,
  TrackType: 0x83,
  FlagLacing: 0x9c,
  DefaultDuration: 0x23e383,
  CodecID: 0x86,
  Video: 0xe0,
  PixelWidth: 0xb0,
  PixelHeight: 0xba,
  Cluster: 0x1f43b675,
  Timecode: 0xe7,
  SimpleBlock: 0xa3,
  Cues: 0x1c53bb6b,
  CuePoint: 0xbb,
  CueTime: 0xb3,
  CueTrackPositions: 0xb7,
  CueTrack: 0xf7,
  CueClusterPosition: 0xf1,
} as const;

const ID = EBML_IDS;

/** The bytes of an element id (its value already carries the length marker). */
function idBytes(id: number): Uint8Array {
  const n = id >= 0x1000000 ? 4 : id >= 0x10000 ? 3 : id >= 0x100 ? 2 : 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (id / 2 ** (8 * (n - 1 - i))) & 255;
  return out;
}

/** An EBML variable-length size: the shortest form (1..8 bytes); all-ones values are reserved. */
export function vint(size: number): Uint8Array {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`bad EBML size ${size}`);
  let n = 1;
  while (n < 8 && size >= 2 ** (7 * n) - 1) n++;
  const out = new Uint8Array(n);
  let v = size;
  for (let i = n - 1; i >= 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  out[0]! |= 1 << (8 - n);
  return out;
}

function element(id: number, ...body: Uint8Array[]): Uint8Array {
  const payload = body.length === 1 ? body[0]! : concatBytes(body);
  return concatBytes([idBytes(id), vint(payload.length), payload]);
}

/** Big-endian unsigned integer in `width` bytes (default: the fewest, at least 1). */
function uintBytes(v: number, width?: number): Uint8Array {
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`bad EBML uint ${v}`);
  let n = width ?? 1;
  if (width === undefined) while (n < 8 && v >= 2 ** (8 * n)) n++;
  const out = new Uint8Array(n);
  let x = v;
  for (let i = n - 1; i >= 0; i--) {
    out[i] = x % 256;
    x = Math.floor(x / 256);
  }
  return out;
}

const uint = (id: number, v: number, width?: number) => element(id, uintBytes(v, width));
const text = (id: number, s: string) => element(id, new TextEncoder().encode(s));
function float64(id: number, v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v);
  return element(id, b);
}

/** The longest a cluster may run: SimpleBlock times are signed 16-bit offsets from the cluster's. */
const MAX_CLUSTER_SPAN_MS = 30_000;

export function muxWebm(frames: readonly WebmFrame[], opts: WebmOptions): Uint8Array {
  if (frames.length === 0) throw new RangeError("a WebM file needs at least one frame");
  if (!frames[0]!.key) throw new RangeError("the first frame must be a key frame");
  if (!(opts.durationMs > 0)) throw new RangeError(`durationMs must be > 0, got ${opts.durationMs}`);
  const app = opts.app ?? "gengate";
  const header = element(
    ID.EBML,
    uint(ID.EBMLVersion, 1),
    uint(ID.EBMLReadVersion, 1),
    uint(ID.EBMLMaxIDLength, 4),
    uint(ID.EBMLMaxSizeLength, 8),
    text(ID.DocType, "webm"),
    uint(ID.DocTypeVersion, 2),
    uint(ID.DocTypeReadVersion, 2),
  );
  const info = element(
    ID.Info,
    uint(ID.TimecodeScale, 1_000_000),
    float64(ID.Duration, opts.durationMs),
    text(ID.MuxingApp, app),
    text(ID.WritingApp, app),
  );
  const trackFields = [
    uint(ID.TrackNumber, 1),
    uint(ID.TrackUID, 1),
    uint(ID.TrackType, 1),
    uint(ID.FlagLacing, 0),
    text(ID.CodecID, "V_VP8"),
  ];
  if (opts.frameDurationNs !== undefined)
    trackFields.push(uint(ID.DefaultDuration, Math.round(opts.frameDurationNs)));
  trackFields.push(element(ID.Video, uint(ID.PixelWidth, opts.width), uint(ID.PixelHeight, opts.height)));
  const tracks = element(ID.Tracks, element(ID.TrackEntry, ...trackFields));

  // Clusters: a new one at every key frame (and before a block's offset would overflow).
  const clusters: { timeMs: number; bytes: Uint8Array }[] = [];
  let blocks: Uint8Array[] = [];
  let start = 0;
  let prev = -1;
  const close = () => {
    if (blocks.length)
      clusters.push({ timeMs: start, bytes: element(ID.Cluster, uint(ID.Timecode, start), ...blocks) });
    blocks = [];
  };
  for (const f of frames) {
    const t = Math.round(f.timeMs);
    if (!Number.isFinite(t) || t < 0 || t < prev)
      throw new RangeError(`frame times must be non-decreasing, got ${f.timeMs}`);
    prev = t;
    if (f.key || t - start > MAX_CLUSTER_SPAN_MS) {
      if (!f.key) throw new RangeError("a cluster would exceed 30 s without a key frame");
      close();
      start = t;
    }
    const rel = t - start;
    const head = Uint8Array.of(0x81, (rel >> 8) & 255, rel & 255, f.key ? 0x80 : 0x00);
    blocks.push(element(ID.SimpleBlock, head, f.data));
  }
  close();

  // Layout inside the Segment: SeekHead, Info, Tracks, Clusters, Cues. Positions are offsets from
  // the start of the Segment's data; SeekHead positions are 8-byte fields so its size is fixed.
  const seek = (id: number, pos: number) =>
    element(ID.Seek, element(ID.SeekID, idBytes(id)), uint(ID.SeekPosition, pos, 8));
  const seekHeadSize = element(ID.SeekHead, seek(ID.Info, 0), seek(ID.Tracks, 0), seek(ID.Cues, 0)).length;
  const infoAt = seekHeadSize;
  const tracksAt = infoAt + info.length;
  let at = tracksAt + tracks.length;
  const cuePoints: Uint8Array[] = [];
  for (const c of clusters) {
    cuePoints.push(
      element(
        ID.CuePoint,
        uint(ID.CueTime, c.timeMs),
        element(ID.CueTrackPositions, uint(ID.CueTrack, 1), uint(ID.CueClusterPosition, at)),
      ),
    );
    at += c.bytes.length;
  }
  const cues = element(ID.Cues, ...cuePoints);
  const seekHead = element(ID.SeekHead, seek(ID.Info, infoAt), seek(ID.Tracks, tracksAt), seek(ID.Cues, at));
  const segment = element(ID.Segment, seekHead, info, tracks, ...clusters.map((c) => c.bytes), cues);
  return concatBytes([header, segment]);
}
