/**
 * The sandbox's media encodings as tasks for a worker thread (src/entries/sandbox-media.ts, run by
 * src/lib/threads.ts): what the provider asks for and what comes back.
 */
import { runInThread } from "../../../lib/threads.ts";
import { encodeTask } from "./encode-task.ts";
import type { Seed } from "./rng.ts";
import type { VideoStyle } from "./video.ts";

export type MediaTask =
  | { op: "png"; width: number; height: number; seed: Seed }
  | { op: "wav"; duration: number; seed: Seed }
  | {
      op: "video";
      duration: number;
      width: number;
      height: number;
      fps: number;
      seed: Seed;
      style: VideoStyle;
      text?: string;
    };

export interface EncodedMedia {
  bytes: Uint8Array;
  contentType: string;
  /** The file's pixel size (a video's frames are the request scaled down, see videoSize). */
  width?: number;
  height?: number;
  /** A video's container duration in milliseconds. */
  durationMs?: number;
}

/**
 * Images up to this many pixels are encoded on the calling thread: a 64 x 64 PNG took 1.5-4.8 ms and
 * a 128 x 128 one about 7 ms on the shared 2-core build machine, about a worker's round trip (5-15 ms
 * there), and the load bench's /run phase (64 x 64 PNGs, docs/performance.md) keeps its figures.
 * Larger images, every WAV (1 s took 2-11 ms) and every video (1 s took 60-120 ms) go to a worker.
 */
export const INLINE_PNG_PIXELS = 128 * 128;

/**
 * Encodes in a worker thread (a tiny image on this one, see INLINE_PNG_PIXELS); stops it
 * (rejecting with `signal.reason`) when `signal` aborts.
 */
export async function encodeMedia(task: MediaTask, signal?: AbortSignal): Promise<EncodedMedia> {
  if (task.op === "png" && task.width * task.height <= INLINE_PNG_PIXELS) {
    signal?.throwIfAborted();
    return encodeTask(task);
  }
  return await runInThread<MediaTask, EncodedMedia>("sandbox-media", task, signal);
}
