import { errorFields, log } from "../lib/log.ts";
import type { QueueServices } from "../server/context.ts";
import { JOB_POLL_MS } from "./events.ts";
import { FINAL_STATUSES } from "./job-row.ts";
import type { JobStore } from "./job-store.ts";

/** What a status stream reads: the job, its status view, and the hints that it changed. */
export interface StatusStreamDeps {
  jobs: Pick<JobStore, "get">;
  views: Pick<QueueServices["views"], "status">;
  events: Pick<QueueServices["events"], "onJob">;
}

/**
 * SSE: the status now, then one event per change; a comment every 15 s keeps proxies from closing it.
 * Used by GET /v1/requests/{id}/status/stream, its fal alias and the console's studio run page;
 * `map` turns the status body into the caller's shape (fal's statuses).
 */
export function statusStream(
  deps: StatusStreamDeps,
  id: string,
  withLogs: boolean,
  signal: AbortSignal,
  map = (b: unknown) => b,
): Response {
  const enc = new TextEncoder();
  let closed = false;
  let off: () => void = () => {};
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let last = "";
      const close = () => {
        if (closed) return;
        closed = true;
        off();
        clearInterval(keepAlive);
        clearInterval(poll);
        controller.close();
      };
      const read = async () => {
        const job = (await deps.jobs.get(id))!;
        const body = JSON.stringify(map(await deps.views.status(job, withLogs)));
        if (closed) return;
        if (body !== last) {
          last = body;
          controller.enqueue(enc.encode(`event: status\ndata: ${body}\n\n`));
        }
        if (FINAL_STATUSES.includes(job.status)) close();
      };
      // One read at a time (events and the poll both ask); one asked for meanwhile runs after it.
      let reading: Promise<void> | null = null;
      let again = false;
      const push = async (): Promise<void> => {
        if (closed) return;
        if (reading) {
          again = true;
          return await reading;
        }
        reading = (async () => {
          try {
            do {
              again = false;
              await read();
            } while (again && !closed);
          } catch (err) {
            log("warn", "status stream read failed", { request_id: id, ...errorFields(err) });
          } finally {
            reading = null;
          }
        })();
        return await reading;
      };
      off = deps.events.onJob(id, () => void push());
      // The events are hints (another instance's may be lost): re-read every JOB_POLL_MS as well.
      poll = setInterval(() => void push(), JOB_POLL_MS);
      keepAlive = setInterval(() => !closed && controller.enqueue(enc.encode(": keep-alive\n\n")), 15_000);
      signal.addEventListener("abort", close, { once: true });
      await push();
    },
    cancel() {
      closed = true;
      off();
      clearInterval(keepAlive);
      clearInterval(poll);
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
