import { describe, expect, test } from "bun:test";
import { THREAD_LIMIT } from "../../../../src/lib/threads.ts";
import { encodeTask } from "../../../../src/providers/sandbox/media/encode-task.ts";
import {
  encodeMedia,
  INLINE_PNG_PIXELS,
  type MediaTask,
} from "../../../../src/providers/sandbox/media/tasks.ts";

// The sandbox's encoders in a worker thread (src/entries/sandbox-media.ts via src/lib/threads.ts).
// That the compiled binary loads the worker is proven by test/providers/sandbox/liveness.blackbox.test.ts
// run with GENGATE_BIN.

describe("sandbox media in a worker thread", () => {
  test("the same bytes as on this thread, for each kind", async () => {
    const tasks: MediaTask[] = [
      { op: "png", width: 300, height: 200, seed: 7 },
      { op: "png", width: 64, height: INLINE_PNG_PIXELS / 64, seed: 7 }, // on this thread
      { op: "wav", duration: 2, seed: 7 },
      { op: "video", duration: 1, width: 854, height: 480, fps: 10, seed: 7, style: "avatar", text: "Hi" },
    ];
    for (const task of tasks) {
      const here = encodeTask(task);
      const there = await encodeMedia(task);
      expect(there.contentType).toBe(here.contentType);
      expect([there.width, there.height, there.durationMs]).toEqual([
        here.width,
        here.height,
        here.durationMs,
      ]);
      expect(Buffer.from(there.bytes).equals(Buffer.from(here.bytes))).toBe(true);
    }
  });

  test("the event loop keeps turning while a large image is encoded", async () => {
    // 4096 x 4096 is about 0.35 s of encoding: on this thread no timer could fire meanwhile.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      await encodeMedia({ op: "png", width: 4096, height: 4096, seed: 1 });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });

  test("an abort stops the encoding and rejects with the signal's reason", async () => {
    const ctl = new AbortController();
    const running = encodeMedia({ op: "png", width: 8192, height: 8192, seed: 1 }, ctl.signal);
    setTimeout(() => ctl.abort(new Error("job aborted")), 50);
    await expect(running).rejects.toThrow("job aborted");
    // The slot is free again: the next task runs.
    const next = await encodeMedia({ op: "png", width: 64, height: 64, seed: 1 });
    expect(next.width).toBe(64);
  });

  test("a task waiting for a thread can be aborted before it starts", async () => {
    const first = Array.from({ length: THREAD_LIMIT }, () =>
      encodeMedia({ op: "png", width: 2048, height: 2048, seed: 2 }),
    );
    const ctl = new AbortController();
    const queued = encodeMedia({ op: "png", width: 300, height: 200, seed: 3 }, ctl.signal);
    ctl.abort(new Error("cancelled while queued"));
    await expect(queued).rejects.toThrow("cancelled while queued");
    for (const p of first) expect((await p).width).toBe(2048);
  });

  test("a worker is kept for the next task: a second task after the first is answered", async () => {
    // Two tasks in a row through the same kept worker (src/lib/threads.ts): the worker script answers
    // every message, not only its first.
    for (const seed of [1, 2, 3]) {
      const task: MediaTask = { op: "png", width: 200, height: 200, seed };
      const here = encodeTask(task);
      const there = await encodeMedia(task);
      expect(Buffer.from(there.bytes).equals(Buffer.from(here.bytes))).toBe(true);
    }
  });

  test("what the encoder throws comes back with its name and message", async () => {
    const err = await encodeMedia({ op: "png", width: 9000, height: 10, seed: 1 }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe("RangeError");
    expect((err as Error).message).toContain("width must be an integer from 1 to 8192");
  });
});
