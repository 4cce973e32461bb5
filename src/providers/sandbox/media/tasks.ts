/**
 * The sandbox's media encodings as tasks for a worker thread (src/entries/sandbox-media.ts, run by
 * src/lib/threads.ts): what the provider asks for and what comes back. This module imports no
 * encoder, so the encoders load in the worker's thread only.
 */
import { runInThread } from "../../../lib/threads.ts";
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

/** Encodes in a worker thread; stops it (rejecting with `signal.reason`) when `signal` aborts. */
export function encodeMedia(task: MediaTask, signal?: AbortSignal): Promise<EncodedMedia> {
  return runInThread<MediaTask, EncodedMedia>("sandbox-media", task, signal);
}
