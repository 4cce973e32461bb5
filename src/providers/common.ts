/** Helpers shared by the provider adapters. */
import { type Family, SNIFF_BYTES, sniffFamily } from "../lib/magic.ts";
import type { ProviderJob } from "./types.ts";

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Media content types by file extension (outputs named by upstreams). */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  mp4: "video/mp4",
  webm: "video/webm",
  mov: "video/quicktime",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  flac: "audio/flac",
  m4a: "audio/mp4",
};

const BY_FAMILY: Readonly<Record<Family, string>> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
  isobmff: "video/mp4",
  webm: "video/webm",
  wav: "audio/wav",
  "mpeg-audio": "audio/mpeg",
  ogg: "audio/ogg",
  flac: "audio/flac",
};

/**
 * The media type of an output read from its first bytes (the upload checks' magic numbers), or null
 * when they are no media gengate knows. For inline outputs whose declared type is only a claim: a
 * `data:text/html,...` labelled output must not be stored and served as a page. MP4 and WebM
 * containers hold audio or video: the model's kind decides.
 */
export function mediaTypeFromBytes(bytes: Uint8Array, kind: "image" | "video" | "audio"): string | null {
  const family = sniffFamily(bytes.subarray(0, SNIFF_BYTES));
  if (!family) return null;
  if (kind === "audio" && family === "isobmff") return "audio/mp4";
  if (kind === "audio" && family === "webm") return "audio/webm";
  return BY_FAMILY[family];
}

/**
 * The lines already in a resumed job's log. Upstreams that answer every log line so far on each
 * poll (fal's `logs`, Replicate's growing `logs` string) would otherwise have a new attempt forward
 * them all again; each earlier line is skipped once (a line the model printed twice, twice).
 */
export class PriorLines {
  private constructor(private readonly counts: Map<string, number>) {}

  static readonly none = new PriorLines(new Map());

  static async of(job: ProviderJob): Promise<PriorLines> {
    const counts = new Map<string, number>();
    for (const line of (await job.priorLogs?.()) ?? []) counts.set(line, (counts.get(line) ?? 0) + 1);
    return new PriorLines(counts);
  }

  /** True, and one occurrence forgotten, when this line was logged by an earlier attempt. */
  take(line: string): boolean {
    const n = this.counts.get(line) ?? 0;
    if (n === 0) return false;
    this.counts.set(line, n - 1);
    return true;
  }
}
