/**
 * CPU-heavy work off the event loop: tasks run in Bun Workers of one of the binary's worker entry
 * points (src/entries/, WORKER_NAMES in entries.ts), so no request waits behind them.
 *
 * Why threads and not slices on the main thread: the sandbox's 8192 x 8192 PNG takes 1.4 s of CPU
 * (a 300 s WAV 0.7 s, a 60 s avatar video 0.8 s, measured on the 2-core build machine), and the four
 * images of one request held /healthz for 5.5 s; the heaviest request of each kind at once, 11.4 s
 * (issue 31).
 *
 * - At most THREAD_LIMIT tasks run at once (the rest wait in order), so one core always stays free
 *   for the event loop.
 * - A worker serves one task at a time and is kept for the next one, since starting one costs about
 *   30 ms (a 64 x 64 PNG's round trip from sources, mostly the new thread loading its modules);
 *   after IDLE_MS without a task it ends, so an idle server holds no thread or its heap.
 * - An abort (the job's deadline or cancel, shutdown) terminates the task's worker at once, wherever
 *   its work is; the next task starts a new one.
 *
 * Compiled, the worker scripts are embedded like every entry point (/$bunfs/root/entries/<name>.js,
 * scripts/build) and `new Worker` loads them from there; from sources, the .ts file.
 */
import { availableParallelism } from "node:os";
import { entryPath, type WorkerName } from "./entries.ts";

/** Tasks running at once: every core but one (at least one). */
export const THREAD_LIMIT = Math.max(1, availableParallelism() - 1);
/** How long an idle worker is kept for the next task. */
export const IDLE_MS = 10_000;

/** What a worker script posts back: the task's result, or the name and message of what it threw. */
type Reply<T> = { ok: true; result: T } | { ok: false; name: string; message: string };

let running = 0;
const waiting: Array<() => void> = [];
const idle = new Map<WorkerName, { worker: Worker; timer: Timer }[]>();

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

/** An idle worker of `name`, or a new one. Workers never keep the process alive by themselves. */
function takeWorker(name: WorkerName): Worker {
  const kept = idle.get(name)?.pop();
  if (kept) {
    clearTimeout(kept.timer);
    return kept.worker;
  }
  const worker = new Worker(entryPath(name));
  worker.unref();
  return worker;
}

function keepWorker(name: WorkerName, worker: Worker): void {
  const list = idle.get(name) ?? [];
  idle.set(name, list);
  const entry = {
    worker,
    timer: setTimeout(() => {
      list.splice(list.indexOf(entry), 1);
      void worker.terminate();
    }, IDLE_MS),
  };
  entry.timer.unref();
  list.push(entry);
}

/**
 * Runs `request` in a worker of script `name` and resolves with its result (rejects with an Error of
 * the same name and message as the one it threw). When `signal` aborts, the worker is terminated
 * and the promise rejects with `signal.reason`.
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
    const worker = takeWorker(name);
    const finish = (keep: boolean, settle: () => void) => {
      signal?.removeEventListener("abort", abort);
      worker.removeEventListener("message", message);
      worker.removeEventListener("error", failed);
      worker.removeEventListener("close", closed);
      if (keep) keepWorker(name, worker);
      else void worker.terminate();
      settle();
    };
    const abort = () => finish(false, () => reject(signal!.reason));
    const message = (e: MessageEvent<Reply<Res>>) => {
      const reply = e.data;
      if (reply.ok) finish(true, () => resolve(reply.result));
      else
        finish(true, () => {
          const err = new Error(reply.message);
          err.name = reply.name;
          reject(err);
        });
    };
    const failed = (e: ErrorEvent) =>
      finish(false, () => reject(new Error(`worker ${name} failed: ${e.message || "unknown error"}`)));
    const closed = () => finish(false, () => reject(new Error(`worker ${name} exited without an answer`)));
    worker.addEventListener("message", message);
    worker.addEventListener("error", failed);
    worker.addEventListener("close", closed);
    signal?.addEventListener("abort", abort, { once: true });
    worker.postMessage(request);
  });
}

/**
 * The worker script's side: answers each request with `handle`'s result, moving (not copying) the
 * buffers it lists in `transfer`.
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
