import { hashSeed, Rng, type Seed } from "./rng.ts";
import { clamp01, hsl, makeScene, mix, type Rgb, ridgeAt, type Scene, skyAt } from "./scene.ts";
import { Vp8Encoder } from "./vp8.ts";
import { planSpeech, type SpeechPlan } from "./wav.ts";
import { muxWebm, type WebmFrame } from "./webm.ts";

/**
 * Short WebM/VP8 videos for the sandbox: a looping landscape with parallax hills and drifting
 * clouds ("scene"), or a talking head whose mouth follows the sandbox speech track of the same
 * seed ("avatar"). WebM/VP8 plays in every browser's `<video>` and in common players; the encoder
 * (vp8.ts) and the muxer (webm.ts) are pure TypeScript.
 *
 * Size rules, chosen to keep files small and encoding fast:
 * - frames are rendered at the requested aspect ratio scaled down to fit VIDEO_MAX_PIXELS
 *   (480x270) and VIDEO_MAX_SIDE (480): 1280x720 and 1920x1080 both give 480x270, a portrait
 *   1080x1920 gives 270x480, and smaller requests keep their size;
 * - the frame rate is min(fps, VIDEO_MAX_FPS); frames = max(1, round(duration x that rate)),
 *   frame i shows at round(i x D / frames) ms where D = round(duration x 1000) ms is the
 *   container's Duration (exact to the millisecond);
 * - a key frame every 2 s (one WebM cluster and cue each), so seeking is cheap; in between,
 *   macroblocks that did not change are sent as "copy the previous frame" (the static background
 *   costs nothing), the rest is intra coded at quantizer index VIDEO_Q_INDEX.
 *
 * Encode time and size, measured on the 2-core build machine (bun 1.4.5, median of 3 seeds, load ~3):
 * - the largest request of the built-in catalog, sandbox/avatar 60 s (600 frames of 480x270):
 *   ~0.7 s, ~0.8 MB (the static background is sent with the key frames only);
 * - sandbox/video 1080p 10 s (100 frames, everything moves): ~0.4 s, ~1.3 MB; 60 s: ~2.2 s, ~7 MB;
 * - MAX_VIDEO_SECONDS (600 s): avatar ~7 s / ~7.5 MB, landscape ~21 s / ~50 MB;
 * all far inside the sandbox models' 600 s time limit. The provider encodes in a worker thread
 * (tasks.ts, src/lib/threads.ts), so even the longest clip never stalls the server.
 * Quality (test/providers/sandbox/video.browser.test.ts, Chromium's decoded frames against the
 * source frames, RGB): ~40 dB for the landscape, ~35 dB for the avatar (its sharp coloured edges
 * lose most in the 4:2:0 chroma subsampling).
 */

export const VIDEO_MAX_PIXELS = 480 * 270;
export const VIDEO_MAX_SIDE = 480;
export const VIDEO_MAX_FPS = 12;
export const MAX_VIDEO_SECONDS = 600;
export const MAX_VIDEO_REQUEST_SIDE = 8192;
/** VP8 quantizer index of every frame (0..127; lower is better and larger). */
export const VIDEO_Q_INDEX = 10;
/** Seconds between key frames. */
export const VIDEO_KEY_INTERVAL_SECONDS = 2;

export type VideoStyle = "scene" | "avatar";

export interface VideoOptions {
  /** "scene" (default): landscape. "avatar": talking head lip-synced to planSpeech(duration, seed, text). */
  style?: VideoStyle;
  /** Text for the avatar's lip sync (same meaning as in encodeSpeechWav). */
  text?: string;
  /** Called with each source frame (RGBA, width x height) as it is encoded; for tests. */
  onFrame?: (index: number, timeMs: number, rgba: Uint8Array) => void;
}

export interface EncodedVideo {
  bytes: Uint8Array;
  contentType: "video/webm";
  frames: number;
  /** Actual pixel size of the video (the request scaled down, see the size rules). */
  width: number;
  height: number;
  /** Effective frame rate (min(fps, VIDEO_MAX_FPS)). */
  fps: number;
  /** Container duration in milliseconds: round(duration x 1000). */
  durationMs: number;
  /** Presentation time of each frame in milliseconds. */
  timesMs: number[];
}

/** Output size for a requested size: same aspect ratio, within the video limits. */
export function videoSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(
    1,
    Math.sqrt(VIDEO_MAX_PIXELS / (width * height)),
    VIDEO_MAX_SIDE / Math.max(width, height),
  );
  return {
    width: Math.max(1, Math.min(VIDEO_MAX_SIDE, Math.round(width * scale))),
    height: Math.max(1, Math.min(VIDEO_MAX_SIDE, Math.round(height * scale))),
  };
}

/** Frame presentation times in ms for a duration and frame rate (see the size rules). */
export function frameTimes(durationSeconds: number, fps: number): { durationMs: number; timesMs: number[] } {
  const eff = Math.min(fps, VIDEO_MAX_FPS);
  const durationMs = Math.max(1, Math.round(durationSeconds * 1000));
  const n = Math.max(1, Math.min(durationMs, Math.round(durationSeconds * eff)));
  const timesMs: number[] = [];
  for (let i = 0; i < n; i++) timesMs.push(Math.round((i * durationMs) / n));
  return { durationMs, timesMs };
}

/**
 * A playable WebM/VP8 video of the requested duration (exact to the millisecond in the
 * container). Deterministic per arguments and seed. Synchronous: a server runs it in a worker
 * thread (tasks.ts).
 */
export function encodeVideo(
  durationSeconds: number,
  width: number,
  height: number,
  fps: number,
  seed: Seed,
  opts: VideoOptions = {},
): EncodedVideo {
  const steps = videoSteps(durationSeconds, width, height, fps, seed, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The encoder as steps: validation and setup, then one step per frame, then the muxed file. */
function* videoSteps(
  durationSeconds: number,
  width: number,
  height: number,
  fps: number,
  seed: Seed,
  opts: VideoOptions,
): Generator<void, EncodedVideo, void> {
  if (!Number.isFinite(durationSeconds) || durationSeconds <= 0 || durationSeconds > MAX_VIDEO_SECONDS) {
    throw new RangeError(`durationSeconds must be > 0 and <= ${MAX_VIDEO_SECONDS}, got ${durationSeconds}`);
  }
  for (const [name, v] of [
    ["width", width],
    ["height", height],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_VIDEO_REQUEST_SIDE) {
      throw new RangeError(`${name} must be an integer from 1 to ${MAX_VIDEO_REQUEST_SIDE}, got ${v}`);
    }
  }
  if (!Number.isFinite(fps) || fps <= 0 || fps > 60)
    throw new RangeError(`fps must be > 0 and <= 60, got ${fps}`);
  const style = opts.style ?? "scene";
  if (style !== "scene" && style !== "avatar") throw new RangeError(`unknown video style ${String(style)}`);

  const size = videoSize(width, height);
  const W = size.width;
  const H = size.height;
  const eff = Math.min(fps, VIDEO_MAX_FPS);
  const { durationMs, timesMs } = frameTimes(durationSeconds, fps);
  const palette = new Palette();
  const painter: FramePainter =
    style === "avatar"
      ? new AvatarPainter(W, H, seed, palette, durationSeconds, opts.text)
      : new ScenePainter(W, H, seed, palette);
  const barIndex = palette.add([255, 255, 255]);
  const barHeight = Math.max(1, Math.round(H / 90));
  const yuv = palette.yuv();
  const encoder = new Vp8Encoder(W, H, { qIndex: VIDEO_Q_INDEX });
  const keyEvery = Math.max(1, Math.round(VIDEO_KEY_INTERVAL_SECONDS * eff));
  const cw = (W + 1) >> 1;
  const ch = (H + 1) >> 1;
  const frame = {
    width: W,
    height: H,
    y: new Uint8Array(W * H),
    u: new Uint8Array(cw * ch),
    v: new Uint8Array(cw * ch),
  };
  const indices = new Uint8Array(W * H);
  const out: WebmFrame[] = [];
  for (let f = 0; f < timesMs.length; f++) {
    const timeMs = timesMs[f]!;
    painter.paint(indices, timeMs / 1000);
    // A thin progress bar along the bottom edge: the clip's position in its duration.
    const barW = Math.round((W * (f + 1)) / timesMs.length);
    for (let y = H - barHeight; y < H; y++) indices.fill(barIndex, y * W, y * W + barW);
    toYuv420(indices, W, H, yuv, frame);
    if (opts.onFrame) opts.onFrame(f, timeMs, palette.rgba(indices));
    const enc = encoder.encode(frame, f % keyEvery === 0);
    out.push({ data: enc.bytes, timeMs, key: enc.key });
    yield;
  }
  const bytes = muxWebm(out, {
    width: W,
    height: H,
    durationMs,
    frameDurationNs: (durationMs / timesMs.length) * 1e6,
    app: "gengate sandbox",
  });
  return {
    bytes,
    contentType: "video/webm",
    frames: timesMs.length,
    width: W,
    height: H,
    fps: eff,
    durationMs,
    timesMs,
  };
}

/**
 * Palette indices to YUV 4:2:0 (BT.601, limited range, as VP8's colour space 0): luma per pixel,
 * chroma from the mean of each 2x2 block's Cb/Cr (edge blocks use the pixels they have).
 */
function toYuv420(
  indices: Uint8Array,
  W: number,
  H: number,
  pal: { y: Uint8Array; u: Float64Array; v: Float64Array },
  out: { y: Uint8Array; u: Uint8Array; v: Uint8Array },
): void {
  for (let i = 0; i < W * H; i++) out.y[i] = pal.y[indices[i]!]!;
  const cw = (W + 1) >> 1;
  const ch = (H + 1) >> 1;
  for (let cy = 0; cy < ch; cy++) {
    const y0 = cy * 2;
    const y1 = Math.min(H - 1, y0 + 1);
    for (let cx = 0; cx < cw; cx++) {
      const x0 = cx * 2;
      const x1 = Math.min(W - 1, x0 + 1);
      const a = indices[y0 * W + x0]!;
      const b = indices[y0 * W + x1]!;
      const c = indices[y1 * W + x0]!;
      const d = indices[y1 * W + x1]!;
      out.u[cy * cw + cx] = Math.round((pal.u[a]! + pal.u[b]! + pal.u[c]! + pal.u[d]!) / 4);
      out.v[cy * cw + cx] = Math.round((pal.v[a]! + pal.v[b]! + pal.v[c]! + pal.v[d]!) / 4);
    }
  }
}

/** BT.601 limited-range RGB -> Y'CbCr (Y as an integer, Cb/Cr unrounded for averaging). */
export function rgbToYuv(r: number, g: number, b: number): [number, number, number] {
  const y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255;
  const u = 128 + (-37.797 * r - 74.203 * g + 112 * b) / 255;
  const v = 128 + (112 * r - 93.786 * g - 18.214 * b) / 255;
  return [Math.round(y), u, v];
}

/** Up to 255 colours: painters draw palette indices, which map to YUV (and RGBA for tests). */
class Palette {
  private readonly colors: number[] = [];
  private readonly byKey = new Map<number, number>();

  add(c: Rgb): number {
    const r = Math.max(0, Math.min(255, Math.round(c[0])));
    const g = Math.max(0, Math.min(255, Math.round(c[1])));
    const b = Math.max(0, Math.min(255, Math.round(c[2])));
    const key = (r << 16) | (g << 8) | b;
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    if (this.colors.length >= 255) throw new Error("palette full");
    this.colors.push(key);
    this.byKey.set(key, this.colors.length - 1);
    return this.colors.length - 1;
  }

  /** `steps` colours from a to b (inclusive); returns their indices. */
  ramp(a: Rgb, b: Rgb, steps: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < steps; i++) out.push(this.add(mix(a, b, steps > 1 ? i / (steps - 1) : 0)));
    return out;
  }

  /** Each colour as Y (integer) and unrounded Cb, Cr (see rgbToYuv). */
  yuv(): { y: Uint8Array; u: Float64Array; v: Float64Array } {
    const n = this.colors.length;
    const out = { y: new Uint8Array(256), u: new Float64Array(256), v: new Float64Array(256) };
    for (let i = 0; i < n; i++) {
      const c = this.colors[i]!;
      const [y, u, v] = rgbToYuv(c >>> 16, (c >>> 8) & 255, c & 255);
      out.y[i] = y;
      out.u[i] = u;
      out.v[i] = v;
    }
    return out;
  }

  /** A frame of indices as RGBA pixels. */
  rgba(indices: Uint8Array): Uint8Array {
    const out = new Uint8Array(indices.length * 4);
    for (let i = 0; i < indices.length; i++) {
      const c = this.colors[indices[i]!] ?? 0;
      out[i * 4] = c >>> 16;
      out[i * 4 + 1] = (c >>> 8) & 255;
      out[i * 4 + 2] = c & 255;
      out[i * 4 + 3] = 255;
    }
    return out;
  }
}

interface FramePainter {
  paint(out: Uint8Array, t: number): void;
}

function fillEllipse(
  out: Uint8Array,
  W: number,
  H: number,
  cx: number,
  cy: number,
  rx: number,
  ry: number,
  color: number,
  yMin = 0,
  yMax = H,
): void {
  if (rx <= 0 || ry <= 0) return;
  const ya = Math.max(yMin, 0, Math.ceil(cy - ry - 0.5));
  const yb = Math.min(yMax, H, Math.floor(cy + ry + 0.5));
  for (let y = ya; y < yb; y++) {
    const dy = (y + 0.5 - cy) / ry;
    const q = 1 - dy * dy;
    if (q <= 0) continue;
    const half = rx * Math.sqrt(q);
    const xa = Math.max(0, Math.round(cx - half));
    const xb = Math.min(W, Math.round(cx + half));
    if (xb > xa) out.fill(color, y * W + xa, y * W + xb);
  }
}

class ScenePainter implements FramePainter {
  private readonly scene: Scene;
  private readonly sky: number[];
  private readonly skyRow: Uint8Array;
  /** Per layer, the palette index of each row (hill colour depends on y only). */
  private readonly layerRows: Uint8Array[];
  private readonly sunIdx: number[];
  private readonly cloudLight: number;
  private readonly cloudShade: number;

  constructor(
    private readonly W: number,
    private readonly H: number,
    seed: Seed,
    palette: Palette,
  ) {
    const scene = makeScene(hashSeed(seed, "png"));
    this.scene = scene;
    this.sky = [];
    const SKY = 64;
    for (let i = 0; i < SKY; i++) this.sky.push(palette.add(skyAt(scene, i / (SKY - 1))));
    this.skyRow = new Uint8Array(H);
    for (let y = 0; y < H; y++) this.skyRow[y] = this.sky[Math.round(clamp01((y + 0.5) / H) * (SKY - 1))]!;
    this.layerRows = scene.layers.map((l) => {
      const ramp = palette.ramp(l.color, mix(l.color, l.mist, 0.9), 16);
      const ridgeTop = l.base - l.amp;
      const rows = new Uint8Array(H);
      for (let y = 0; y < H; y++) {
        const m = clamp01(((y + 0.5) / H - ridgeTop) / (1 - ridgeTop + 1e-9));
        rows[y] = ramp[Math.round(m * m * 15)]!;
      }
      return rows;
    });
    const skyAtSun = skyAt(scene, scene.sun.y);
    this.sunIdx = [
      palette.add(mix(skyAtSun, scene.sun.glow, 0.2)),
      palette.add(mix(skyAtSun, scene.sun.glow, 0.42)),
      palette.add(scene.sun.color),
    ];
    const c = scene.clouds[0];
    this.cloudLight = palette.add(c ? c.light : [255, 255, 255]);
    this.cloudShade = palette.add(c ? c.shade : [220, 220, 230]);
  }

  paint(out: Uint8Array, t: number): void {
    const { W, H, scene } = this;
    for (let y = 0; y < H; y++) out.fill(this.skyRow[y]!, y * W, (y + 1) * W);
    // The sun sinks slowly; its halo is two flat rings.
    const sun = scene.sun;
    const sx = sun.x * W;
    const sy = (sun.y + 0.004 * t) * H;
    const sr = Math.max(1, sun.r * H);
    fillEllipse(out, W, H, sx, sy, sr * 1.9, sr * 1.9, this.sunIdx[0]!);
    fillEllipse(out, W, H, sx, sy, sr * 1.4, sr * 1.4, this.sunIdx[1]!);
    fillEllipse(out, W, H, sx, sy, sr, sr, this.sunIdx[2]!);
    // Clouds drift right and wrap around.
    const span = W / H + 0.6;
    for (const c of scene.clouds) {
      const u = (((((c.x * W) / H + c.speed * t + 0.3) % span) + span) % span) - 0.3;
      for (const p of c.parts) {
        const cx = (u + p.dx) * H;
        const cy = (c.y + p.dy) * H;
        fillEllipse(out, W, H, cx, cy, p.rx * H, p.ry * H, this.cloudShade);
        fillEllipse(out, W, H, cx, cy - p.ry * H * 0.18, p.rx * H * 0.92, p.ry * H * 0.85, this.cloudLight);
      }
    }
    // Hills scroll with parallax; their colour depends on y only, so only ridges change.
    scene.layers.forEach((layer, l) => {
      const rows = this.layerRows[l]!;
      const off = layer.speed * t;
      for (let x = 0; x < W; x++) {
        const top = Math.max(0, Math.round(ridgeAt(layer, (x + 0.5) / H + off) * H));
        for (let y = top, o = top * W + x; y < H; y++, o += W) out[o] = rows[y]!;
      }
    });
  }
}

class AvatarPainter implements FramePainter {
  private readonly bgRow: Uint8Array;
  private readonly c: Record<
    | "skin"
    | "skinShade"
    | "hair"
    | "hairDark"
    | "shirt"
    | "shirtShade"
    | "white"
    | "iris"
    | "pupil"
    | "mouth"
    | "lip"
    | "teeth"
    | "cheek",
    number
  >;
  private readonly plan: SpeechPlan;
  private readonly blinks: number[];
  private readonly gaze: { t: number; x: number; y: number }[];

  constructor(
    private readonly W: number,
    private readonly H: number,
    seed: Seed,
    palette: Palette,
    durationSeconds: number,
    text: string | undefined,
  ) {
    const rng = Rng.from(seed, "avatar");
    const scene = makeScene(hashSeed(seed, "png"));
    const top = mix(scene.skyTop, [40, 40, 48], 0.35);
    const bottom = mix(scene.skyBottom, [40, 40, 48], 0.25);
    const ramp = palette.ramp(top, bottom, 48);
    this.bgRow = new Uint8Array(H);
    for (let y = 0; y < H; y++) this.bgRow[y] = ramp[Math.round(((y + 0.5) / H) * 47)]!;
    const skin = hsl(rng.range(18, 34), rng.range(0.35, 0.6), rng.range(0.32, 0.78));
    const hair = hsl(rng.range(0, 50), rng.range(0.2, 0.6), rng.range(0.08, 0.45));
    const shirt = hsl(rng.range(0, 360), rng.range(0.35, 0.7), rng.range(0.3, 0.55));
    const irisColor = rng.pick<Rgb>([
      [70, 110, 160],
      [90, 60, 35],
      [70, 120, 80],
      [60, 45, 30],
    ]);
    this.c = {
      skin: palette.add(skin),
      skinShade: palette.add(mix(skin, [60, 30, 30], 0.22)),
      cheek: palette.add(mix(skin, [220, 90, 90], 0.18)),
      hair: palette.add(hair),
      hairDark: palette.add(mix(hair, [0, 0, 0], 0.35)),
      shirt: palette.add(shirt),
      shirtShade: palette.add(mix(shirt, [0, 0, 0], 0.25)),
      white: palette.add([242, 242, 238]),
      iris: palette.add(irisColor),
      pupil: palette.add([20, 20, 24]),
      mouth: palette.add([70, 20, 28]),
      lip: palette.add(mix(skin, [170, 60, 70], 0.45)),
      teeth: palette.add([235, 232, 225]),
    };
    this.plan = planSpeech(durationSeconds, seed, text);
    this.blinks = [];
    for (let t = rng.range(0.8, 2.5); t < durationSeconds; t += rng.range(2.2, 5)) this.blinks.push(t);
    this.gaze = [{ t: 0, x: 0, y: 0 }];
    for (let t = rng.range(1.5, 3.5); t < durationSeconds; t += rng.range(1.5, 4)) {
      this.gaze.push({ t, x: rng.pick([-1, -0.5, 0, 0, 0.5, 1]), y: rng.pick([0, 0, -0.5, 0.5]) });
    }
  }

  /** Mouth opening 0..1 around time t: voicing weighted by jaw height (F1), plus some frication. */
  private mouthOpen(t: number): number {
    const p = this.plan;
    const i = Math.min(p.frames - 1, Math.max(0, Math.round(t / p.frameSeconds)));
    let best = 0;
    for (let k = Math.max(0, i - 4); k <= Math.min(p.frames - 1, i + 4); k++) {
      const jaw = clamp01((p.f1[k]! - 250) / 550);
      const v = p.voice[k]! * (0.35 + 0.65 * jaw) + p.noise[k]! * 0.25;
      if (v > best) best = v;
    }
    return clamp01(best);
  }

  paint(out: Uint8Array, t: number): void {
    const { W, H, c } = this;
    for (let y = 0; y < H; y++) out.fill(this.bgRow[y]!, y * W, (y + 1) * W);
    const s = H; // the figure scales with the height, centred horizontally
    const cx = W / 2;
    // Shoulders and neck.
    fillEllipse(out, W, H, cx, 1.12 * s, 0.42 * s, 0.34 * s, c.shirtShade);
    fillEllipse(out, W, H, cx, 1.14 * s, 0.4 * s, 0.33 * s, c.shirt);
    for (let y = Math.round(0.66 * s); y < Math.min(H, Math.round(0.84 * s)); y++) {
      out.fill(
        c.skinShade,
        y * W + Math.max(0, Math.round(cx - 0.07 * s)),
        y * W + Math.min(W, Math.round(cx + 0.07 * s)),
      );
    }
    fillEllipse(out, W, H, cx, 0.8 * s, 0.08 * s, 0.05 * s, c.skinShade);
    // Hair behind the head, the head, then the fringe.
    fillEllipse(out, W, H, cx, 0.4 * s, 0.2 * s, 0.24 * s, c.hairDark);
    fillEllipse(out, W, H, cx - 0.165 * s, 0.45 * s, 0.025 * s, 0.045 * s, c.skinShade); // ears
    fillEllipse(out, W, H, cx + 0.165 * s, 0.45 * s, 0.025 * s, 0.045 * s, c.skinShade);
    fillEllipse(out, W, H, cx, 0.47 * s, 0.165 * s, 0.215 * s, c.skin);
    fillEllipse(out, W, H, cx, 0.3 * s, 0.18 * s, 0.12 * s, c.hair, 0, Math.round(0.33 * s));
    fillEllipse(out, W, H, cx - 0.1 * s, 0.56 * s, 0.035 * s, 0.02 * s, c.cheek);
    fillEllipse(out, W, H, cx + 0.1 * s, 0.56 * s, 0.035 * s, 0.02 * s, c.cheek);

    // Eyes: blink for 150 ms at seeded moments; the gaze wanders.
    const blinking = this.blinks.some((b) => t >= b && t < b + 0.15);
    let g = this.gaze[0]!;
    for (const e of this.gaze) if (e.t <= t) g = e;
    const open = this.mouthOpen(t);
    const browLift = 0.006 * s * open;
    for (const side of [-1, 1]) {
      const ex = cx + side * 0.07 * s;
      const ey = 0.44 * s;
      // Eyebrows.
      const by = Math.round(ey - 0.05 * s - browLift);
      for (let y = by; y < by + Math.max(1, Math.round(0.012 * s)); y++) {
        if (y < 0 || y >= H) continue;
        out.fill(
          c.hairDark,
          y * W + Math.max(0, Math.round(ex - 0.04 * s)),
          y * W + Math.min(W, Math.round(ex + 0.04 * s)),
        );
      }
      if (blinking) {
        const y = Math.round(ey);
        out.fill(
          c.skinShade,
          y * W + Math.max(0, Math.round(ex - 0.035 * s)),
          y * W + Math.min(W, Math.round(ex + 0.035 * s)),
        );
        continue;
      }
      fillEllipse(out, W, H, ex, ey, 0.035 * s, 0.02 * s, c.white);
      const px = ex + g.x * 0.014 * s;
      const py = ey + g.y * 0.006 * s;
      fillEllipse(
        out,
        W,
        H,
        px,
        py,
        0.016 * s,
        0.016 * s,
        c.iris,
        Math.round(ey - 0.02 * s),
        Math.round(ey + 0.02 * s),
      );
      fillEllipse(out, W, H, px, py, 0.008 * s, 0.008 * s, c.pupil);
    }
    // Nose.
    fillEllipse(out, W, H, cx, 0.52 * s, 0.018 * s, 0.012 * s, c.skinShade);
    // Mouth: lips, then the opening, with teeth showing when wide open.
    const my = 0.6 * s;
    const mw = 0.055 * s * (1 - 0.15 * open);
    const mh = 0.006 * s + 0.04 * s * open;
    fillEllipse(out, W, H, cx, my, mw + 0.008 * s, mh + 0.008 * s, c.lip);
    if (open > 0.05) {
      fillEllipse(out, W, H, cx, my, mw, mh, c.mouth);
      if (open > 0.35)
        fillEllipse(out, W, H, cx, my - mh * 0.75, mw * 0.7, mh * 0.3, c.teeth, Math.round(my - mh), H);
    } else {
      const y = Math.round(my);
      out.fill(c.mouth, y * W + Math.max(0, Math.round(cx - mw)), y * W + Math.min(W, Math.round(cx + mw)));
    }
  }
}
