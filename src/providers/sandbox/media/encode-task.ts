import { encodePng } from "./png.ts";
import type { EncodedMedia, MediaTask } from "./tasks.ts";
import { encodeVideo } from "./video.ts";
import { encodeSpeechWav } from "./wav.ts";

/** Runs one task on this thread (the worker's; tests call it directly). */
export function encodeTask(task: MediaTask): EncodedMedia {
  switch (task.op) {
    case "png":
      return {
        bytes: encodePng(task.width, task.height, task.seed),
        contentType: "image/png",
        width: task.width,
        height: task.height,
      };
    case "wav":
      return { bytes: encodeSpeechWav(task.duration, task.seed), contentType: "audio/wav" };
    case "video": {
      const v = encodeVideo(task.duration, task.width, task.height, task.fps, task.seed, {
        style: task.style,
        text: task.text,
      });
      return {
        bytes: v.bytes,
        contentType: v.contentType,
        width: v.width,
        height: v.height,
        durationMs: v.durationMs,
      };
    }
  }
}
