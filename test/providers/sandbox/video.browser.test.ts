// The sandbox's WebM/VP8 video played by Chromium's <video>: it must load (readyState >= 2), report
// the encoder's size and duration, and show, at several times, pictures close to the frames the
// encoder was given (PSNR over RGB). A wrong table entry, coefficient or prediction shows up as
// garbage or drift (a late inter frame far from its source), and fails here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { encodeVideo, type VideoOptions } from "../../../src/providers/sandbox/media/index.ts";
import { describeBrowser, launchBrowser } from "../../helpers/browser.ts";

interface Clip {
  bytes: Uint8Array;
  width: number;
  height: number;
  durationMs: number;
  timesMs: number[];
  /** Source RGBA frames by index (only the ones the test looks at). */
  frames: Map<number, Uint8Array>;
}

function clip(
  duration: number,
  w: number,
  h: number,
  seed: number,
  style: VideoOptions["style"],
  keep: number[],
): Clip {
  const frames = new Map<number, Uint8Array>();
  const v = encodeVideo(duration, w, h, 10, seed, {
    style,
    onFrame: (i, _t, rgba) => {
      if (keep.includes(i)) frames.set(i, rgba.slice());
    },
  });
  return {
    bytes: v.bytes,
    width: v.width,
    height: v.height,
    durationMs: v.durationMs,
    timesMs: v.timesMs,
    frames,
  };
}

/** PSNR (dB) between two RGBA images over the R, G and B channels. */
function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  let n = 0;
  for (let i = 0; i < a.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      const d = a[i + c]! - b[i + c]!;
      se += d * d;
      n++;
    }
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * n) / se);
}

/**
 * In the page: a <video> of `src`, awaited until it has data (readyState >= 2), then for each time
 * a seek and the canvas pixels (RGBA, base64).
 */
const PLAY_SCRIPT = `async ({ src, times }) => {
  const v = document.createElement("video");
  v.muted = true;
  v.preload = "auto";
  const failed = new Promise((_, reject) =>
    v.addEventListener("error", () => reject(new Error("video error " + v.error?.code + " " + v.error?.message))),
  );
  v.src = src;
  document.body.append(v);
  await Promise.race([failed, new Promise((r) => v.addEventListener("loadeddata", r, { once: true }))]);
  const info = { readyState: v.readyState, width: v.videoWidth, height: v.videoHeight, duration: v.duration };
  const canvas = document.createElement("canvas");
  canvas.width = v.videoWidth;
  canvas.height = v.videoHeight;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const shots = [];
  for (const t of times) {
    const seeked = new Promise((r) => v.addEventListener("seeked", r, { once: true }));
    v.currentTime = t;
    await Promise.race([failed, seeked]);
    // Wait until the compositor presented the sought frame (or 1 s), then draw it.
    await new Promise((r) => {
      const timer = setTimeout(r, 1000);
      v.requestVideoFrameCallback(() => { clearTimeout(timer); r(); });
    });
    ctx.drawImage(v, 0, 0);
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let bin = "";
    for (let i = 0; i < px.length; i += 0x8000) bin += String.fromCharCode(...px.subarray(i, i + 0x8000));
    shots.push(btoa(bin));
  }
  return { ...info, shots };
}`;

describeBrowser("sandbox video in Chromium's <video>", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof Bun.serve>>;
  const files = new Map<string, Uint8Array>();
  // Scene: 4.25 s at 480x270 (a 720p request), key frames at 0 and 2 s; frames 0 (key), 19 (the
  // last inter frame of the first group: most room for drift), 20 (key) and 41 (late inter).
  const scene = clip(4.25, 1280, 720, 7, "scene", [0, 19, 20, 41]);
  // Avatar: 2 s, odd size (not a multiple of 16: padding and cropping), mouth moving.
  const avatar = clip(2, 202, 150, 3, "avatar", [0, 9, 15]);

  beforeAll(async () => {
    files.set("/scene.webm", scene.bytes);
    files.set("/avatar.webm", avatar.bytes);
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/") {
          return new Response("<!doctype html><title>v</title><body></body>", {
            headers: { "content-type": "text/html; charset=utf-8" },
          });
        }
        const body = files.get(path);
        if (!body) return new Response("not found", { status: 404 });
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get("range") ?? "");
        if (range) {
          const start = Number(range[1]);
          const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
          return new Response(body.slice(start, end + 1), {
            status: 206,
            headers: {
              "content-type": "video/webm",
              "accept-ranges": "bytes",
              "content-range": `bytes ${start}-${end}/${body.length}`,
            },
          });
        }
        return new Response(body, { headers: { "content-type": "video/webm", "accept-ranges": "bytes" } });
      },
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
  });

  /** Loads a clip in a <video>, then seeks to each time and returns what a canvas draws of it. */
  async function play(path: string, timesSec: number[]) {
    const page = await browser.newPage();
    try {
      await page.goto(`http://127.0.0.1:${server.port}/`);
      // A string: the tests are not compiled against the DOM's types.
      const r = (await page.evaluate(
        `(${PLAY_SCRIPT})(${JSON.stringify({ src: path, times: timesSec })})`,
      )) as {
        readyState: number;
        width: number;
        height: number;
        duration: number;
        shots: string[];
      };
      return { ...r, shots: r.shots.map((b64) => Uint8Array.from(Buffer.from(b64, "base64"))) };
    } finally {
      await page.close();
    }
  }

  for (const [name, c] of [
    ["scene", scene],
    ["avatar", avatar],
  ] as const) {
    test(`${name}: plays with the encoder's size and duration, frames match their sources`, async () => {
      const indices = [...c.frames.keys()];
      // Seek into the middle of each frame's display interval.
      const times = indices.map((i) => {
        const next = c.timesMs[i + 1] ?? c.durationMs;
        return (c.timesMs[i]! + next) / 2 / 1000;
      });
      const r = await play(`/${name}.webm`, times);
      expect(r.readyState).toBeGreaterThanOrEqual(2);
      expect([r.width, r.height]).toEqual([c.width, c.height]);
      expect(Math.abs(r.duration - c.durationMs / 1000)).toBeLessThan(0.002);
      const scores = indices.map((i, k) => psnr(r.shots[k]!, c.frames.get(i)!));
      console.log(
        `${name} PSNR by frame ${indices.join(", ")}: ${scores.map((s) => s.toFixed(1)).join(", ")} dB`,
      );
      for (const s of scores) expect(s).toBeGreaterThan(30);
      // Each shot matches its own source better than the other sources: the seek landed on the right
      // frame, not on any frame of a clip that barely moves.
      const apart = indices.map((i) =>
        indices.map((j) => psnr(c.frames.get(i)!, c.frames.get(j)!).toFixed(1)),
      );
      console.log(`${name} PSNR between the source frames: ${JSON.stringify(apart)}`);
      indices.forEach((i, k) => {
        for (const j of indices) {
          if (j !== i && psnr(c.frames.get(i)!, c.frames.get(j)!) < 60)
            expect(psnr(r.shots[k]!, c.frames.get(j)!)).toBeLessThan(scores[k]!);
        }
      });
    }, 60_000);
  }
});
