/**
 * A gengate job as a Replicate prediction (Replicate's HTTP API, "predictions.get"), the object the
 * `replicate` JS client reads: `status`, `output`, `error`, `logs`, `urls`. The prediction id IS
 * the request id, so the same job reads at /v1/requests/{id}, in the console and through other doors.
 */
import { createHash } from "node:crypto";
import { LINK_TTL_SECONDS, type LinkSigner } from "../files/signing.ts";
import type { JobLogStore } from "../queue/job-log-store.ts";
import type { JobRow, JobStatus } from "../queue/job-row.ts";
import type { JobViews } from "../server/context.ts";

export type PredictionStatus = "starting" | "processing" | "succeeded" | "failed" | "canceled";

/** Replicate's statuses for gengate's: queued is "starting" (no worker yet), running is "processing". */
const STATUS: Record<JobStatus, PredictionStatus> = {
  IN_QUEUE: "starting",
  IN_PROGRESS: "processing",
  COMPLETED: "succeeded",
  FAILED: "failed",
  CANCELLED: "canceled",
};

const versions = new Map<string, string>();

/**
 * A model's version id: the SHA-256 of its catalog id in hex, 64 characters like Replicate's. The
 * client's `run("owner/name:version")` sends only the part after the colon (replicate
 * lib/identifier.js, index.js run), so the version alone must name the model.
 */
export function modelVersion(modelId: string): string {
  let v = versions.get(modelId);
  if (v === undefined) {
    v = createHash("sha256").update(modelId).digest("hex");
    versions.set(modelId, v);
  }
  return v;
}

/** What rendering a prediction reads: the job's output with fresh signed links, its logs, the address. */
export interface PredictionViewDeps {
  views: Pick<JobViews, "output">;
  jobLogs: Pick<JobLogStore, "list">;
  publicUrl: string;
  /** Signs `urls.stream` (its reader sends no key: src/replicate/stream.ts). */
  signer: Pick<LinkSigner, "sign">;
}

/** What a stream link's signature covers: the prediction id, under a name no output link can have. */
export const streamSubject = (id: string) => `${id}.stream`;

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** The prediction's URLs on this server; `stream` is signed, valid 24 hours like the output links. */
function urls(deps: Pick<PredictionViewDeps, "publicUrl" | "signer">, id: string) {
  const exp = Math.floor(Date.now() / 1000) + LINK_TTL_SECONDS;
  const sig = deps.signer.sign(streamSubject(id), 0, exp);
  return {
    get: `${deps.publicUrl}/v1/predictions/${id}`,
    cancel: `${deps.publicUrl}/v1/predictions/${id}/cancel`,
    stream: `${deps.publicUrl}/v1/predictions/${id}/stream?exp=${exp}&sig=${sig}`,
    web: `${deps.publicUrl}/console/requests/${id}`,
  };
}

/** The prediction of a job with what was read for it (output and logs; none for a job just opened). */
function prediction(
  deps: Pick<PredictionViewDeps, "publicUrl" | "signer">,
  job: JobRow,
  read: { output: unknown; logs: string; withLogs: boolean },
) {
  const done = job.completed_at !== null && job.started_at !== null;
  return {
    id: job.id,
    model: job.model_id,
    version: modelVersion(job.model_id),
    status: STATUS[job.status],
    input: JSON.parse(job.input) as unknown,
    output: read.output,
    error: job.status === "FAILED" ? (job.error_message ?? job.error_code ?? "generation_failed") : null,
    ...(read.withLogs ? { logs: read.logs } : {}),
    // Seconds, as Replicate gives them: running (predict_time) and since the create (total_time).
    metrics: done
      ? {
          predict_time: Number(job.completed_at! - job.started_at!) / 1000,
          total_time: Number(job.completed_at! - job.created_at) / 1000,
        }
      : {},
    urls: urls(deps, job.id),
    created_at: iso(job.created_at),
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
    data_removed: false,
    source: job.source === "STUDIO" ? "web" : "api",
  };
}

export type Prediction = ReturnType<typeof prediction>;

/** A job just opened (nothing to read yet): the create's stored Idempotency answer. */
export function openedPrediction(
  deps: Pick<PredictionViewDeps, "publicUrl" | "signer">,
  job: JobRow,
): Prediction {
  return prediction(deps, job, { output: null, logs: "", withLogs: true });
}

/**
 * A job as a prediction now: fresh signed output links once it succeeded, its logs as one string
 * (Replicate's `logs` is text; the client's parseProgressFromLogs reads it line by line). The list
 * leaves logs out (`withLogs` false), as Replicate's list does.
 */
export async function predictionView(
  deps: PredictionViewDeps,
  job: JobRow,
  withLogs = true,
): Promise<Prediction> {
  const output = job.status === "COMPLETED" && job.kind !== "text" ? await mediaOutput(deps, job) : null;
  const logs = withLogs ? (await deps.jobLogs.list(job.id)).map((l) => l.message).join("\n") : "";
  return prediction(deps, job, { output, logs, withLogs });
}

/**
 * The output as Replicate models give it: the links to the job's files, a single URL when the model's
 * output holds one file outside any list (a video, a speech, an upscale), a list when its files sit
 * in a list (`images: [...]`, even of one) or when there are several. An output without files is
 * given as the model answered it.
 */
async function mediaOutput(deps: PredictionViewDeps, job: JobRow): Promise<unknown> {
  const rendered = await deps.views.output(job);
  let inList = false;
  const placeholders = (x: unknown, listed: boolean): number => {
    if (Array.isArray(x)) return x.reduce((n: number, v) => n + placeholders(v, true), 0);
    if (x === null || typeof x !== "object") return 0;
    const o = x as Record<string, unknown>;
    if (typeof o.$output === "number" && Object.keys(o).length === 1) {
      if (listed) inList = true;
      return 1;
    }
    return Object.values(o).reduce((n: number, v) => n + placeholders(v, listed), 0);
  };
  const files = placeholders(JSON.parse(job.output ?? "{}"), false);
  if (files === 0) return rendered;
  const prefix = `/requests/${job.id}/output/`;
  const links: string[] = [];
  const collect = (x: unknown): void => {
    if (typeof x === "string" && x.includes(prefix)) links.push(x);
    else if (Array.isArray(x)) x.forEach(collect);
    else if (x !== null && typeof x === "object") Object.values(x).forEach(collect);
  };
  collect(rendered);
  return links.length === 1 && !inList ? links[0] : links;
}
