import { REPLAYED_HEADER, type StoredResponse } from "../idempotency/idempotency.ts";
import { baseUrl } from "../lib/url.ts";
import type { QueueServices } from "../server/context.ts";
import { falStatus } from "./fal-answers.ts";
import type { JobRow } from "./job-row.ts";
import { type StatusStreamDeps, statusStream } from "./status-stream.ts";
import { type SubmitDeps, type SubmitInput, submitJob } from "./submit.ts";

/** What a fal stream uses: the queue's submit, the status stream, the output view, the address. */
export interface FalStreamDeps extends Omit<SubmitDeps, "jobs" | "events" | "views"> {
  jobs: SubmitDeps["jobs"] & StatusStreamDeps["jobs"];
  events: SubmitDeps["events"] & StatusStreamDeps["events"];
  views: SubmitDeps["views"] & StatusStreamDeps["views"] & Pick<QueueServices["views"], "output">;
  publicUrl: string;
  shutdownSignal: AbortSignal;
}

/** The opened stream's job, or the key's stored answer when its Idempotency-Key named no job. */
export type FalStreamOpened = { stream: Response } | { replay: StoredResponse };

/**
 * How long the error event has to reach the client before the response is aborted. Aborted at
 * once, Bun reset the connection before the last events left (the client saw IN_PROGRESS last,
 * then its ApiError); 250 ms delivered them on loopback in every run. Should a slow link still lose
 * them, the client raises its error all the same: a failure is never read as an output.
 */
const ABORT_AFTER_MS = 250;

const enc = new TextEncoder();
const sse = (event: string, body: unknown) =>
  enc.encode(`event: ${event}\ndata: ${JSON.stringify(body)}\n\n`);

/**
 * POST {model}/stream for fal's clients (`fal.stream` of @fal-ai/client posts to
 * `https://fal.run/<model>/stream` with `Accept: text/event-stream`, libs/client/src/streaming.ts):
 * one queue job opened exactly as the fal submit opens it (submitJob: the same hold, the same
 * Idempotency-Key: a replay streams the job it opened), then SSE. The client takes every event's
 * JSON as a stream value and resolves `done()` with the last one, so: fal's status events (the
 * alias routes' shape, falStatus), then on COMPLETED one `output` event, the output itself. On
 * FAILED or CANCELLED an `error` event (fal's error body: `detail`, `error_type`) ends the stream,
 * and the response is then aborted: an HTTP stream that ends cleanly is `done()` for the client
 * (it resolves with the last event), an aborted one makes it raise its own ApiError.
 */
export async function openFalStream(
  deps: FalStreamDeps,
  s: SubmitInput,
  signal: AbortSignal,
): Promise<FalStreamOpened> {
  const opened = await submitJob(deps, s);
  let id: string;
  if (opened.replay) {
    const stored = JSON.parse(opened.replay.body) as { request_id?: unknown };
    if (typeof stored.request_id !== "string") return { replay: opened.replay };
    id = stored.request_id;
  } else {
    id = opened.value.id;
  }
  const base = baseUrl(deps);
  const status = statusStream(deps, id, false, AbortSignal.any([signal, deps.shutdownSignal]), (b) =>
    falStatus(base, b as Record<string, unknown>),
  );
  const source = status.body!.getReader();
  let failed = false;
  // Pulled one chunk at a time (highWaterMark 0), so the error event has been handed to the socket
  // before the next pull aborts the response.
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (failed) {
          await Bun.sleep(ABORT_AFTER_MS);
          return controller.error(new Error(`fal stream of ${id}: the request ended without an output`));
        }
        const next = await source.read();
        if (!next.done) return controller.enqueue(next.value);
        const job = (await deps.jobs.get(id))!;
        if (job.status === "COMPLETED") {
          controller.enqueue(sse("output", await deps.views.output(job)));
        } else if (job.status === "FAILED" || job.status === "CANCELLED") {
          controller.enqueue(sse("error", failure(job)));
          failed = true;
          return;
        }
        // Otherwise the client went away or the server is stopping: the stream just ends.
        controller.close();
      },
      cancel: async (reason) => await source.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return {
    stream: new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-fal-request-id": id,
        // A replay of the key streams the job it opened, marked as the native replays are.
        ...(opened.replay ? { [REPLAYED_HEADER]: "true" } : {}),
      },
    }),
  };
}

/** fal's error body for a request that ended without an output (as falFailedResponse answers it). */
function failure(job: JobRow): Record<string, unknown> {
  const cancelled = job.status === "CANCELLED";
  const message = cancelled
    ? "The request was cancelled; nothing was charged."
    : job.error_message || "The generation failed; nothing was charged.";
  const code = cancelled ? "cancelled" : (job.error_code ?? "generation_failed");
  return {
    request_id: job.id,
    status: job.status,
    detail: message,
    error_type: code,
    error: { code: cancelled ? "conflict" : "generation_failed", message },
  };
}
