// A worker script (src/lib/threads.ts): the sandbox provider's PNG, WAV and WebM encoders run here,
// in a thread of their own, so that seconds of encoding never hold the event loop (issue 31: four
// 8192 x 8192 images were 5.5 s of main-thread CPU). Compiled, scripts/build embeds it as an entry point.
import { answerInThread, ownBuffer } from "../lib/threads.ts";
import { encodeTask } from "../providers/sandbox/media/encode-task.ts";
import type { EncodedMedia, MediaTask } from "../providers/sandbox/media/tasks.ts";

answerInThread<MediaTask, EncodedMedia>((task) => {
  const media = encodeTask(task);
  const bytes = ownBuffer(media.bytes);
  return { result: { ...media, bytes }, transfer: [bytes.buffer] };
});
