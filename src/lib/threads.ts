/**
 * CPU-heavy work off the event loop: one task in a Bun Worker running one of the binary's worker
 * entry points (src/entries/, WORKER_NAMES in entries.ts), so no request waits behind it.
 *
 * Why a thread and not slices on the main thread: the sandbox's 8192 x 8192 PNG takes 1.4 s of CPU
 * (a 300 s WAV 0.7 s, a 60 s avatar video 0.8 s, measured on the 2-core build machine), and the four
 * images of one request held /healthz for 5.5 s; three such requests for 12-15 s (issue 31).
 *
 * One thread per task, ended when the task ends: an abort (the job's deadline or cancel, shutdown)
 * terminates it at once, wherever the encoder is, and an idle server keeps no thread or its heap.
 * A task's round trip costs about 30 ms more than the work (a 64 x 64 PNG from sources, mostly the
 * new thread loading its modules), nothing next to the seconds of the tasks it is for. At most THREAD_LIMIT tasks run at
 * once (the rest wait in order), so one core always stays free for the event loop.
 *
 * Compiled, the worker scripts are embedded like every entry point (/$bunfs/root/entries/<name>.js,
 * scripts/build) and `new Worker` loads them from there; from sources, the .ts file.
 */
import { availableParallelism } from "node:os";
import { entryPath, type WorkerName } from "./entries.ts";

/** Tasks running at once: every core but one (at least one). */
export const THREAD_LIMIT = Math.max(1, availableParallelism() - 1);

/** What a worker script posts back: the task's result, or the message of what it threw. */
type Reply<T> = { ok: true; result: T } | { ok: false; name: string; message: string };

let running = 0;
const waiting: Array<() => void> = [];

/** Resolves when a slot is free (taking it); rejects if `signal` aborts first (taking none). */
function acquire(signal?: AbortSignal): Promise<void> {
  if (running < THREAD_LIMIT) {
    running++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const go = () => {
      signal?.removeEventListener("abort", abort);
      running++;
      resolve();
    };
    const abort = () => {
      const at = waiting.indexOf(go);
      if (at >= 0) waiting.splice(at, 1);
      reject(signal!.reason);
    };
    waiting.push(go);
    signal?.addEventListener("abort", abort, { once: true });
  });
}

function release(): void {
  running--;
  waiting.shift()?.();
}

/**
 * Runs `request` in a new thread of worker script `name` and resolves with its result (rejects with
 * an Error of the same name and message as the one it threw). When `signal` aborts, the thread is
 * terminated and the promise rejects with `signal.reason`.
 */
export async function runInThread<Req, Res>(
  name: WorkerName,
  request: Req,
  signal?: AbortSignal,
): Promise<Res> {
  signal?.throwIfAborted();
  await acquire(signal);
  try {
    return await runOne<Req, Res>(name, request, signal);
  } finally {
    release();
  }
}

function runOne<Req, Res>(name: WorkerName, request: Req, signal?: AbortSignal): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const worker = new Worker(entryPath(name));
    const finish = (settle: () => void) => {
      signal?.removeEventListener("abort", abort);
      worker.removeEventListener("message", message);
      worker.removeEventListener("error", failed);
      worker.removeEventListener("close", closed);
      worker.terminate();
      settle();
    };
    const abort = () => finish(() => reject(signal!.reason));
    const message = (e: MessageEvent<Reply<Res>>) => {
      const reply = e.data;
      if (reply.ok) finish(() => resolve(reply.result));
      else
        finish(() => {
          const err = new Error(reply.message);
          err.name = reply.name;
          reject(err);
        });
    };
    const failed = (e: ErrorEvent) =>
      finish(() => reject(new Error(`worker ${name} failed: ${e.message || "unknown error"}`)));
    const closed = () => finish(() => reject(new Error(`worker ${name} exited without an answer`)));
    worker.addEventListener("message", message);
    worker.addEventListener("error", failed);
    worker.addEventListener("close", closed);
    signal?.addEventListener("abort", abort, { once: true });
    worker.postMessage(request);
  });
}

/**
 * The worker script's side: answers the one request of this thread with `handle`'s result, moving
 * (not copying) the buffers it lists in `transfer`.
 */
export function answerInThread<Req, Res>(
  handle: (request: Req) => { result: Res; transfer: ArrayBuffer[] },
): void {
  const scope = globalThis as unknown as {
    onmessage: ((e: MessageEvent<Req>) => void) | null;
    postMessage(message: unknown, transfer?: ArrayBuffer[]): void;
  };
  scope.onmessage = (e) => {
    let reply: Reply<Res>;
    let transfer: ArrayBuffer[] = [];
    try {
      const done = handle(e.data);
      reply = { ok: true, result: done.result };
      transfer = done.transfer;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, name: error.name, message: error.message };
    }
    scope.postMessage(reply, transfer);
  };
}

/** A buffer that can be moved to another thread whole: `bytes` itself, or a copy when it is a view of a larger one. */
export function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return whole && bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
}
