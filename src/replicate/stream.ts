/**
 * A prediction's `urls.stream`: Replicate's server-sent events, read by replicate.stream() (replicate
 * lib/stream.js createReadableStream: `output` events, `error` raises, `done` ends). The client
 * fetches it WITHOUT its key (only `Accept: text/event-stream`), so the link itself is the
 * capability: signed like an output link, valid 24 hours.
 */
import { LINK_TTL_SECONDS, type LinkSigner } from "../files/signing.ts";
import { DomainError } from "../lib/errors.ts";
import type { JobRow } from "../queue/job-row.ts";
import type { JobStore } from "../queue/job-store.ts";
import { type WaitDeps, waitForFinal } from "../queue/submit.ts";
import { type PredictionViewDeps, predictionView, streamSubject } from "./prediction-view.ts";

export interface PredictionStreamDeps extends WaitDeps, PredictionViewDeps {
  jobs: WaitDeps["jobs"] & Pick<JobStore, "get">;
  signer: Pick<LinkSigner, "sign" | "verify">;
  shutdownSignal: AbortSignal;
}

/** The job a stream link names: 403 forbidden unless signed by this server, 410 expired after its expiry. */
export async function streamedJob(
  deps: PredictionStreamDeps,
  id: string,
  q: { exp?: string; sig?: string },
): Promise<JobRow> {
  const now = Math.floor(Date.now() / 1000);
  const exp = Number(q.exp);
  const signed =
    /^\d{1,12}$/.test(q.exp ?? "") &&
    q.sig !== undefined &&
    exp <= now + LINK_TTL_SECONDS + 60 &&
    deps.signer.verify(streamSubject(id), 0, exp, q.sig);
  if (!signed) throw new DomainError("forbidden", "The stream link's signature is not valid.");
  if (exp < now) throw new DomainError("expired", "The stream link has expired; read the prediction again.");
  const job = await deps.jobs.get(id);
  if (!job) throw new DomainError("not_found", `No prediction ${id}.`);
  return job;
}

/** One server-sent event; a line break in the data continues it on another `data:` line. */
const frame = (event: string, data: string) =>
  `event: ${event}\n${data
    .split("\n")
    .map((l) => `data: ${l}`)
    .join("\n")}\n\n`;

/** The events of an ended prediction: its outputs then done, its error, or done with the reason. */
async function endFrames(deps: PredictionViewDeps, job: JobRow): Promise<string> {
  const p = await predictionView(deps, job, false);
  if (p.status === "failed") return frame("error", p.error ?? "The prediction failed.");
  if (p.status === "canceled") return frame("done", JSON.stringify({ reason: "canceled" }));
  if (p.status !== "succeeded") return frame("error", "The prediction did not end in time.");
  const outputs = Array.isArray(p.output) ? p.output : [p.output];
  const out = outputs.map((o) => frame("output", typeof o === "string" ? o : JSON.stringify(o))).join("");
  return out + frame("done", "{}");
}

/**
 * SSE of a prediction: a comment every 15 s while the job runs (so proxies keep it open), then its
 * end as Replicate's events. Files come as one `output` event each, once the job has ended (gengate
 * stores a job's outputs at its end); no `logs` events.
 */
export function predictionStream(deps: PredictionStreamDeps, job: JobRow, signal: AbortSignal): Response {
  const enc = new TextEncoder();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(enc.encode(text));
        } catch {} // the reader has gone
      };
      keepAlive = setInterval(() => send(": keep-alive\n\n"), 15_000);
      try {
        // Up to the job's own deadline (recovery ends it there), plus a minute for that to land.
        const ms = Math.max(0, Number(job.deadline_at) - Date.now()) + 60_000;
        const ended = await waitForFinal(deps, job.id, ms, AbortSignal.any([signal, deps.shutdownSignal]));
        if (!signal.aborted) send(await endFrames(deps, ended));
      } finally {
        clearInterval(keepAlive);
        try {
          controller.close();
        } catch {}
      }
    },
    cancel() {
      clearInterval(keepAlive);
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
