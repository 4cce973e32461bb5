/**
 * The OpenAI videos door (docs/clients.md "OpenAI videos"): a video is a queue job of a video or
 * avatar model, opened through src/jobs like a /queue submit, and read back as OpenAI's video
 * object. Its `id` is the request id, so the same job is /v1/requests/{id} too.
 */

import type { Principal } from "../accounts/store.ts";
import { checkModelAllowed } from "../catalog/access.ts";
import type { Model } from "../catalog/model.ts";
import type { JobOutputStore } from "../files/job-output-store.ts";
import { type OutputDownloadDeps, outputDownload } from "../files/output-download.ts";
import type { FileRow } from "../files/store.ts";
import { createAccountUpload, type UploadDeps } from "../files/uploads.ts";
import type { IdempotencyClaim, StoredResponse } from "../idempotency/idempotency.ts";
import { type MediaJobDeps, prepareMediaJob } from "../jobs/media.ts";
import { apiOpener, type OpenerDeps, type OpenJobDeps, openJobOnce } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import { errorFields, log } from "../lib/log.ts";
import type { JobRow } from "../queue/job-row.ts";
import type { JobStore } from "../queue/job-store.ts";
import { completedJob, type OwnershipDeps, tryCancel } from "../queue/ownership.ts";
import { modelInputOf, sizeOfInput, VIDEO_KINDS } from "./input.ts";

/** What the videos door uses: opening a media job, the owner's jobs, their outputs, uploads. */
export interface VideoDeps extends OpenJobDeps, MediaJobDeps, OpenerDeps, OwnershipDeps, OutputDownloadDeps {
  jobs: OpenJobDeps["jobs"] & OwnershipDeps["jobs"] & Pick<JobStore, "get">;
  jobOutputs: OutputDownloadDeps["jobOutputs"] & Pick<JobOutputStore, "rows" | "file" | "delete">;
  live: OpenerDeps["live"] & UploadDeps["live"];
}

/** A create request as read from its body: OpenAI's fields, and input_reference when sent as a file. */
export interface VideoBody {
  fields: Record<string, unknown>;
  /** A multipart input_reference: its bytes, as an upload request of the key. */
  reference: Request | null;
}

const seconds = (ms: bigint | null) => (ms === null ? null : Math.floor(Number(ms) / 1000));

/** OpenAI's statuses; CANCELLED reads as failed, with an error saying so. */
const STATUS = {
  IN_QUEUE: "queued",
  IN_PROGRESS: "in_progress",
  COMPLETED: "completed",
  FAILED: "failed",
  CANCELLED: "failed",
} as const;

/**
 * Progress by state: gengate does not know how far along an upstream is, so a running video reads
 * 50 until it ends (OpenAI's clients only show it; they poll on `status`).
 */
const PROGRESS = { IN_QUEUE: 0, IN_PROGRESS: 50, COMPLETED: 100, FAILED: 100, CANCELLED: 0 } as const;

/** OpenAI's video object of a job; `expiresAt` (ms): when its stored video goes, if known. */
export function videoView(model: Model | undefined, job: JobRow, expiresAt: bigint | null = null) {
  const input = JSON.parse(job.input) as Record<string, unknown>;
  const quote = JSON.parse(job.quote) as { units: string };
  const prompt = input.prompt ?? input.text;
  return {
    id: job.id,
    object: "video" as const,
    status: STATUS[job.status],
    progress: PROGRESS[job.status],
    model: job.model_id,
    prompt: typeof prompt === "string" ? prompt : null,
    seconds: quote.units,
    size: sizeOfInput(model, input),
    created_at: seconds(job.created_at)!,
    completed_at: seconds(job.completed_at),
    expires_at: seconds(expiresAt),
    error:
      job.status === "FAILED"
        ? {
            code: job.error_code ?? "generation_failed",
            message: job.error_message ?? "The generation failed.",
          }
        : job.status === "CANCELLED"
          ? { code: "cancelled", message: "The video was cancelled before it started; nothing was charged." }
          : null,
    remixed_from_video_id: null,
  };
}

export type Video = ReturnType<typeof videoView>;

/**
 * The model a video request names: a video or avatar model of the catalog. Others are 400 naming
 * the door that runs them (text: use_chat_completions; images: /v1/images/generations).
 */
export function videoModel(deps: Pick<MediaJobDeps, "catalog">, id: unknown): Model {
  if (typeof id !== "string" || id === "") {
    throw new DomainError("validation_error", "model is required: a video model id from GET /v1/models.", {
      param: "model",
    });
  }
  const model = deps.catalog.get(id);
  if (!model) {
    throw new DomainError(
      "unknown_model",
      `Model "${id.slice(0, 200)}" is not in the catalog; see GET /v1/models.`,
      {
        param: "model",
      },
    );
  }
  if (model.kind === "text") {
    throw new DomainError("use_chat_completions", `${id} is a text model: call POST /v1/chat/completions.`, {
      param: "model",
    });
  }
  if (!VIDEO_KINDS.includes(model.kind)) {
    const door =
      model.kind === "image"
        ? "POST /v1/images/generations"
        : model.kind === "audio"
          ? "POST /v1/audio/speech"
          : `POST /v1/queue/${id}`;
    throw new DomainError(
      "validation_error",
      `${id} is an ${model.kind} model, not a video model: call ${door}.`,
      {
        param: "model",
      },
    );
  }
  return model;
}

/** The answer of a create: a new video, or an Idempotency-Key's stored answer. */
export type Created = { replay: StoredResponse; video?: undefined } | { replay: null; video: Video };

/**
 * POST /v1/videos: the model input mapped from OpenAI's fields, an input_reference file stored
 * as an upload of the key, then one media job prepared and opened under the Idempotency-Key like a
 * /queue submit (the video object is its stored answer). The upload is removed again when no job
 * comes of it (refused, or a replay).
 */
export async function createVideo(
  deps: VideoDeps,
  principal: Principal,
  body: VideoBody,
  claim: IdempotencyClaim | null,
): Promise<Created> {
  // As every door, a key's allowed_models before the catalog (prepareMediaJob checks it again).
  if (typeof body.fields.model === "string") checkModelAllowed(principal, body.fields.model);
  const model = videoModel(deps, body.fields.model);
  const upload = body.reference
    ? await createAccountUpload(deps, principal.accountId, body.reference, principal.keyId)
    : null;
  try {
    const job = await prepareMediaJob(deps, {
      who: apiOpener(deps, principal),
      modelId: model.id,
      body: modelInputOf(model, body.fields, upload?.id ?? null),
      queryWebhook: null,
    });
    const opened = await openJobOnce(deps, job, {
      claim,
      answer: (j) => ({ status: 200, body: JSON.stringify(videoView(model, j)) }),
    });
    if (opened.replay) {
      if (upload) await dropUpload(deps, upload);
      return { replay: opened.replay };
    }
    return { replay: null, video: videoView(model, opened.value) };
  } catch (err) {
    if (upload) await dropUpload(deps, upload);
    throw err;
  }
}

async function dropUpload(deps: Pick<VideoDeps, "files">, row: FileRow): Promise<void> {
  await deps.files
    .delete(row)
    .catch((err) =>
      log("warn", "unused input_reference not removed", { file_id: row.id, ...errorFields(err) }),
    );
}

/** An owned video by id: a malformed id, another account's job or a job of another kind is 404. */
export async function ownedVideo(deps: VideoDeps, principal: Principal, id: string): Promise<JobRow> {
  const job = UUID_PATTERN.test(id) ? await deps.jobs.getOwned(id, principal.accountId) : null;
  if (!job || !VIDEO_KINDS.includes(job.kind))
    throw new DomainError("not_found", `No video ${id.slice(0, 64)}.`, { param: "video_id" });
  return job;
}

/** The first stored video output of a job, with its index: the `video` variant. */
async function videoOutput(deps: VideoDeps, job: JobRow) {
  const rows = await deps.jobOutputs.rows(job.id);
  return rows.find((r) => r.content_type.startsWith("video/")) ?? null;
}

/** A stored job's video object, with its stored video's expiry once completed. */
async function storedVideo(deps: VideoDeps, job: JobRow): Promise<Video> {
  const out = job.status === "COMPLETED" ? await videoOutput(deps, job) : null;
  return videoView(deps.catalog.get(job.model_id), job, out?.expires_at ?? null);
}

/** GET /v1/videos/{id}: the video object. */
export async function retrieveVideo(deps: VideoDeps, principal: Principal, id: string): Promise<Video> {
  return await storedVideo(deps, await ownedVideo(deps, principal, id));
}

/**
 * GET /v1/videos/{id}/content: the stored video through the output download path (download cap,
 * Range). Before it completes: 409 request_not_ready. gengate makes no thumbnail or spritesheet:
 * those variants are 404.
 */
export async function videoContent(
  deps: VideoDeps,
  principal: Principal,
  id: string,
  variant: string | undefined,
  request: Request,
): Promise<Response> {
  await ownedVideo(deps, principal, id);
  const job = await completedJob(deps, principal, id);
  if (variant !== undefined && variant !== "video") {
    throw new DomainError(
      "not_found",
      `This video has no ${variant.slice(0, 32)}; only variant=video is stored.`,
      {
        param: "variant",
      },
    );
  }
  const out = await videoOutput(deps, job);
  const file = out ? await deps.jobOutputs.file(job.id, Number(out.idx)) : null;
  if (!out || !file) throw new DomainError("not_found", "This video's file was deleted or has expired.");
  return await outputDownload(deps, request, file, { requestId: job.id, index: Number(out.idx) });
}

/**
 * DELETE /v1/videos/{id}: a queued video is cancelled (its hold released, as the queue's cancel
 * does); a completed one loses its stored files; a failed or cancelled one has none. A video being
 * generated cannot be stopped: 409 not_cancellable (it will finish and be charged).
 */
export async function deleteVideo(deps: VideoDeps, principal: Principal, id: string) {
  const job = await ownedVideo(deps, principal, id);
  const r = await tryCancel(deps, principal, job.id);
  const now = r.cancelled ? r.job : r.now;
  if (!r.cancelled && now.status === "IN_PROGRESS") {
    throw new DomainError(
      "not_cancellable",
      "The video is being generated and cannot be stopped; it can be deleted once it has finished.",
      { extra: { request_id: job.id, status: now.status } },
    );
  }
  if (!r.cancelled && now.status === "COMPLETED") {
    for (const row of await deps.jobOutputs.rows(job.id)) {
      const file = await deps.jobOutputs.file(job.id, Number(row.idx));
      // The row first: a download then finds no output rather than a row without bytes.
      await deps.jobOutputs.delete(job.id, row.idx);
      if (file) await deps.blobs.delete([file.path]);
    }
  }
  return { id: job.id, object: "video.deleted" as const, deleted: true as const };
}

/** OpenAI's list query: limit 1..100 (20), after a video id, order desc|asc; 400 naming the one at fault. */
function listQuery(q: { after?: string; limit?: string; order?: string }) {
  const limit = q.limit === undefined ? 20 : /^\d{1,3}$/.test(q.limit) ? Number(q.limit) : 0;
  if (limit < 1 || limit > 100)
    throw new DomainError("validation_error", "limit must be an integer from 1 to 100.", { param: "limit" });
  if (q.after !== undefined && q.after !== "" && !UUID_PATTERN.test(q.after))
    throw new DomainError("validation_error", "after must be the id of a video.", { param: "after" });
  if (q.order !== undefined && q.order !== "asc" && q.order !== "desc")
    throw new DomainError("validation_error", "order must be asc or desc.", { param: "order" });
  return { limit, after: q.after || null, order: (q.order ?? "desc") as "asc" | "desc" };
}

/** GET /v1/videos: the account's videos (video and avatar jobs), OpenAI's cursor list. */
export async function listVideos(
  deps: VideoDeps,
  principal: Principal,
  query: { after?: string; limit?: string; order?: string },
) {
  const q = listQuery(query);
  const rows = await deps.jobs.list(principal.accountId, {
    limit: q.limit + 1,
    before: q.after,
    kinds: VIDEO_KINDS,
    order: q.order,
  });
  const { page, next_cursor } = keysetPage(rows, q.limit);
  const data = await Promise.all(page.map(async (j) => await storedVideo(deps, j)));
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: next_cursor !== null,
  };
}
