import type { ModelAccess } from "../catalog/access.ts";
import type { Model } from "../catalog/model.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import type { JobOutputStore } from "../files/job-output-store.ts";
import { FILE_ID } from "../files/store.ts";
import { type CheckedBlob, storedFile } from "../files/stored-file.ts";
import { createOwnedUpload, type UploadDeps } from "../files/uploads.ts";
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from "../idempotency/idempotency.ts";
import { type ModelDeps, resolveMediaModel } from "../jobs/models.ts";
import type { Opener } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import { contentTypeOf, SNIFF_BYTES } from "../lib/magic.ts";
import { requestMeta } from "../lib/request-meta.ts";
import { FINAL_STATUSES, type JobRow } from "../queue/job-row.ts";
import { type RunDeps, runJob, waitForFinal } from "../queue/submit.ts";
import type { JobViews } from "../server/context.ts";
import type { ImageResponseFormat } from "./media-map.ts";

/**
 * OpenAI's images and speech doors (docs/clients.md "OpenAI images and speech"): synchronous in
 * OpenAI's API, so each call opens ONE queue job exactly as /run does (prepareMediaJob, openJob:
 * the hold is /estimate's price, a failure is free) and answers when the job ends.
 */

/** What a door's call uses: /run's opening and wait, the Idempotency-Key's store, the job's outputs. */
export interface OpenAIMediaDeps extends RunDeps {
  idempotency: RunDeps["idempotency"] & Pick<IdempotencyStore, "claimRunning">;
  views: Pick<JobViews, "listItem">;
  jobOutputs: Pick<JobOutputStore, "rows" | "file">;
  blobs: BlobBackend;
}

const DOOR_OF_KIND: Record<string, string> = {
  video: "POST /v1/videos",
  avatar: "POST /v1/videos",
  audio: "POST /v1/audio/speech",
  image: "POST /v1/images/generations",
  upscale: "POST /v1/queue/{model_id}",
};

/**
 * The model of an images (`image`) or speech (`audio`) call: unknown 400 unknown_model, a text
 * model 400 use_chat_completions (resolveMediaModel, as every media door; an open circuit is 503),
 * another media kind 400 naming its door; param `model`, OpenAI's name.
 */
export function openaiMediaModel(
  deps: ModelDeps,
  who: ModelAccess,
  modelId: unknown,
  kind: "image" | "audio",
): Model {
  if (typeof modelId !== "string" || modelId.length === 0) {
    throw new DomainError("validation_error", "model is required: a model id from GET /v1/models.", {
      param: "model",
    });
  }
  const model = resolveMediaModel(deps, modelId, who, "model");
  if (model.kind !== kind) {
    throw new DomainError(
      "validation_error",
      `${modelId} is a ${model.kind} model: call ${DOOR_OF_KIND[model.kind]}.`,
      { param: "model" },
    );
  }
  return model;
}

/**
 * The longest a call waits for its job: the server closes a connection idle for 255 s (Bun's most,
 * src/app/start.ts), and nothing is sent before the answer; 240 s leaves a margin.
 */
export const MAX_WAIT_S = 240;

/** One door call: who, the model, its mapped input, the Idempotency-Key. */
export interface OpenAIMediaCall {
  who: Opener;
  keyId: string;
  model: Model;
  input: Record<string, unknown>;
  claim: IdempotencyClaim | null;
  signal: AbortSignal;
}

/**
 * Opens the call's job and waits for its end: up to the model's time limit (never less than
 * run_wait_seconds, never more than MAX_WAIT_S), since OpenAI's clients take the answer as the
 * result. The Idempotency-Key is claimed around it (a duplicate meanwhile is 409) and keeps the
 * job's request id once the job is opened and has not failed: a replay answers the same job (fresh
 * links), waiting again for it if it is still running (a client whose connection dropped retries
 * with its key and gets its job, not a second one). A failure frees the key, as /run's does.
 */
export async function runOpenAIMedia(
  deps: OpenAIMediaDeps,
  c: OpenAIMediaCall,
): Promise<{ job: JobRow; replayed: boolean }> {
  const waitS = Math.min(Math.max(deps.live.limits.runWaitSeconds, c.model.time_limit_seconds), MAX_WAIT_S);
  const claim = await deps.idempotency.claimRunning(c.keyId, c.claim);
  if (claim.replay) {
    const { request_id } = JSON.parse(claim.replay.body) as { request_id: string };
    const job = await deps.jobs.get(request_id);
    if (!job) throw new DomainError("not_found", `Request ${request_id} is no longer kept.`);
    const signal = AbortSignal.any([c.signal, deps.shutdownSignal]);
    const ended = FINAL_STATUSES.includes(job.status)
      ? job
      : await waitForFinal(deps, request_id, waitS * 1000, signal);
    return { job: completed(ended), replayed: true };
  }
  let stored: StoredResponse | null = null;
  try {
    const job = await runJob(
      deps,
      { who: c.who, modelId: c.model.id, body: c.input, queryWebhook: null },
      c.signal,
      waitS * 1000,
    );
    if (job.status !== "FAILED" && job.status !== "CANCELLED") {
      stored = { status: 200, body: JSON.stringify({ request_id: job.id }) };
    }
    return { job: completed(job), replayed: false };
  } finally {
    await claim.settle(stored);
  }
}

/** The job if it completed; a failed one is 502 generation_failed, one still running 409 request_not_ready. */
function completed(job: JobRow): JobRow {
  if (job.status === "COMPLETED") return job;
  if (job.status === "FAILED" || job.status === "CANCELLED") {
    throw new DomainError("generation_failed", "The generation failed; nothing was charged.", {
      extra: { request_id: job.id },
    });
  }
  throw new DomainError(
    "request_not_ready",
    `The job is still running; read GET /v1/requests/${job.id} for its result, or send this call again with the same Idempotency-Key to wait for it.`,
    { extra: { request_id: job.id } },
  );
}

/**
 * Largest image answered as b64_json, read into memory from our own stored output: 32 MiB is 43
 * MiB of base64 in the JSON answer. A larger one is answered as a link instead (response_format url).
 */
export const B64_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The images answer: `{created, data: [{url} | {b64_json} | both], output_format}` from the job's
 * stored outputs (bytes read from our own store, never from a URL). An image above B64_MAX_BYTES is
 * 400 when b64_json was asked for, and answered by its link alone when no format was named.
 */
export async function imagesAnswer(deps: OpenAIMediaDeps, job: JobRow, format: ImageResponseFormat) {
  // The links come in the order of the stored outputs' indexes, as these rows do.
  const all = await deps.jobOutputs.rows(job.id);
  const links = format === "b64_json" ? [] : (await deps.views.listItem(job)).output_urls;
  const rows = all.flatMap((r, at) =>
    r.content_type.startsWith("image/") ? [{ ...r, link: links[at] }] : [],
  );
  const created = Math.floor(Number(job.completed_at ?? BigInt(Date.now())) / 1000);
  const outputFormat = rows[0]?.content_type.slice("image/".length);
  const data: { url?: string; b64_json?: string }[] = [];
  for (const r of rows) {
    const item: { url?: string; b64_json?: string } = {};
    if (format !== "b64_json") item.url = r.link;
    if (format !== "url" && r.size <= BigInt(B64_MAX_BYTES))
      item.b64_json = await storedBase64(deps, job, r.idx);
    else if (format === "b64_json") {
      throw new DomainError(
        "validation_error",
        `An image of request ${job.id} is larger than ${B64_MAX_BYTES} bytes, too large for b64_json; the job completed and was charged: read its links with GET /v1/requests/${job.id}, and ask for response_format "url" next time.`,
        { param: "response_format", extra: { request_id: job.id } },
      );
    }
    data.push(item);
  }
  return { created, data, ...(outputFormat ? { output_format: outputFormat } : {}) };
}

/** One stored output's bytes as base64, read from our own store. */
async function storedBase64(deps: OpenAIMediaDeps, job: JobRow, idx: bigint): Promise<string> {
  const f = (await deps.jobOutputs.file(job.id, Number(idx)))!;
  const bytes = await deps.blobs.read(f.path, 0, Number(f.size));
  if (bytes.length !== Number(f.size)) {
    throw new DomainError("internal_error", "A stored output of this request is missing on the server.");
  }
  return Buffer.from(bytes).toString("base64");
}

/** The speech answer: the job's stored audio (checked, streamed), with its content type. */
export async function speechAudio(
  deps: OpenAIMediaDeps,
  request: Request,
  job: JobRow,
): Promise<{ contentType: string; size: number; blob: CheckedBlob }> {
  const row = (await deps.jobOutputs.rows(job.id)).find((r) => r.content_type.startsWith("audio/"));
  const f = row ? await deps.jobOutputs.file(job.id, Number(row.idx)) : null;
  if (!row || !f) throw new DomainError("internal_error", "The job completed without audio.");
  const size = Number(f.size);
  const blob = await storedFile(requestMeta(request)?.id, deps.blobs, f.path, size, {
    job_id: job.id,
    idx: Number(row.idx),
  });
  return { contentType: f.content_type, size, blob };
}

/**
 * One image part of an edit stored as an upload of the account and key (the same checks as POST
 * /v1/files: allowed type, magic bytes, size, free disk); returns its file id and digest. A part
 * without an image type is typed from its bytes; anything but an image is 415.
 */
export async function storeEditImage(
  deps: UploadDeps,
  owner: { accountId: string; keyId: string },
  part: File,
  param: string,
): Promise<{ fileId: string; sha256: string }> {
  const head = new Uint8Array(await part.slice(0, SNIFF_BYTES).arrayBuffer());
  const declared = part.type.startsWith("image/") ? part.type : null;
  const type = contentTypeOf(head, declared) ?? declared;
  if (!type?.startsWith("image/")) {
    throw new DomainError(
      "unsupported_media_type",
      `${param} must be an image file (PNG, JPEG, WebP, GIF).`,
      {
        param,
      },
    );
  }
  const request = new Request("http://upload.invalid/", {
    method: "POST",
    body: part,
    headers: { "content-type": type, "content-length": String(part.size) },
  });
  const row = await createOwnedUpload(deps, owner, request);
  return { fileId: row.id, sha256: row.sha256 };
}

/** An edit's form as read: its text fields, its image parts and mask (files, or gengate file ids). */
export interface EditForm {
  fields: Record<string, unknown>;
  images: (File | string)[];
  mask: File | string | null;
}

/**
 * An edit's image parts stored as uploads of the key's account (a text part must be a file id:
 * prepareMediaJob then checks it is the account's own). Returns the file ids and what stands for
 * the parts in the Idempotency-Key's fingerprint: the files' digests (a new upload has a new id).
 */
export async function storeEditParts(
  deps: UploadDeps,
  owner: { accountId: string; keyId: string },
  form: EditForm,
): Promise<{ images: string[]; mask: string | null; fingerprint: Record<string, unknown> }> {
  const one = async (part: File | string, param: string) => {
    if (typeof part !== "string") return await storeEditImage(deps, owner, part, param);
    if (!FILE_ID.test(part)) {
      throw new DomainError("validation_error", `${param} must be an image file or a gengate file_id.`, {
        param,
      });
    }
    return { fileId: part, sha256: part };
  };
  const images = [];
  for (const part of form.images) images.push(await one(part, "image"));
  const mask = form.mask === null ? null : await one(form.mask, "mask");
  return {
    images: images.map((i) => i.fileId),
    mask: mask?.fileId ?? null,
    fingerprint: { image: images.map((i) => i.sha256), mask: mask?.sha256 ?? null },
  };
}
