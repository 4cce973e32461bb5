/**
 * The studio's core (issue 17): what the console's studio pages call to price, open and list the
 * runs of a signed-in person, on the account's balance, without an API key. Every function goes
 * through the API's own service (the estimate of POST /v1/estimate, prepareMediaJob/openJob of
 * src/jobs/, completeChat of /v1/chat/completions), so there is no second copy of any money rule:
 * the opener is `studioOpener` (source STUDIO, key null, the person's in-flight cap).
 */

import { EVERY_MODEL } from "../catalog/access.ts";
import type { Model } from "../catalog/model.ts";
import { type ChatAnswer, type ChatDeps, chatQuote, completeChat } from "../chat/service.ts";
import { parseChatBody } from "../chat/validate.ts";
import { createAccountUpload, type UploadDeps } from "../files/uploads.ts";
import { type MediaJobDeps, prepareMediaJob } from "../jobs/media.ts";
import { type ModelDeps, resolveTextModel } from "../jobs/models.ts";
import { type OpenerDeps, type OpenJobDeps, openJob, studioOpener } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { type AccountEstimate, accountEstimate } from "../pricing/account-estimate.ts";
import type { JobRow } from "../queue/job-row.ts";
import type { JobStore } from "../queue/job-store.ts";
import type { AppContext, JobViews } from "../server/context.ts";
import { type FieldErrors, studioFields, uploadFieldName } from "./form.ts";

/** The person and the account a studio action is for (a console session looking at an account). */
export interface StudioSession {
  accountId: string;
  personId: string;
}

/** What pricing for an account uses (POST /v1/estimate's `accountEstimate`): models, uploads, the account, rates. */
export type StudioEstimateDeps = Pick<AppContext, "catalog" | "files" | "accounts" | "fx">;

/** What a studio run uses: the media door's preparation, the studio opener, the opening. */
export type StudioRunDeps = MediaJobDeps & OpenerDeps & OpenJobDeps;

/** What the history reads: the person's jobs, their views and outputs' types. */
export type StudioHistoryDeps = Pick<AppContext, "jobs" | "views" | "jobOutputs">;

function inputObject(input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new DomainError("validation_error", "The model input must be a JSON object.", { param: "input" });
  }
  return input as Record<string, unknown>;
}

/** Exactly what POST /v1/estimate answers for this account and input (same function, same errors). */
export async function studioEstimate(
  ctx: StudioEstimateDeps,
  accountId: string,
  modelId: string,
  input: unknown,
): Promise<AccountEstimate> {
  return await accountEstimate(ctx, accountId, modelId, inputObject(input ?? {}), EVERY_MODEL);
}

/**
 * Opens a studio run of a media model, exactly as the API's queue submit does (resolve, validate,
 * resolve file references, price, reserve, open in one transaction): 400 on a bad input, 402
 * insufficient_balance, 429 too_many_in_flight (the person's cap). Returns the job, IN_QUEUE.
 */
export async function studioRun(
  ctx: StudioRunDeps,
  session: StudioSession,
  modelId: string,
  input: unknown,
): Promise<JobRow> {
  const job = await prepareMediaJob(ctx, {
    who: studioOpener(ctx, session),
    modelId,
    body: inputObject(input),
    queryWebhook: null,
  });
  return (await openJob(ctx, job)).value;
}

/**
 * A studio chat call: `body` is a chat completions body without `model` (messages, max_tokens,
 * stream...); the answer is the API's own (a JSON chat.completion or an SSE stream), the call
 * opened with the studio opener and settled like any other.
 */
export async function studioChat(
  ctx: ChatDeps,
  session: StudioSession,
  modelId: string,
  body: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<ChatAnswer> {
  const req = parseChatBody({ ...inputObject(body), model: modelId });
  return completeChat(ctx, studioOpener(ctx, session), req, null, signal);
}

/** The Estimate of a studio chat's next reply: what POST /v1/estimate answers for the tokens held. */
export interface ChatEstimate {
  estimate: AccountEstimate;
  /** The prompt's tokens (the conversation and the new message). */
  input_tokens: number;
  /** The most the reply may write (max_tokens, 4096 when missing, within the context). */
  output_tokens: number;
}

/**
 * What sending `body` (a chat completions body without `model`) would hold: the chat's own quote
 * (chatQuote, what startChat reserves), priced for the account by POST /v1/estimate's function with
 * those tokens, so the two agree. The reply is then charged what its tokens cost, never more.
 */
export async function studioChatEstimate(
  ctx: StudioEstimateDeps & ModelDeps,
  accountId: string,
  modelId: string,
  body: unknown,
): Promise<ChatEstimate> {
  const req = parseChatBody({ ...inputObject(body), model: modelId });
  const { quote } = chatQuote(resolveTextModel(ctx, req.model, EVERY_MODEL), req);
  return {
    estimate: await accountEstimate(
      ctx,
      accountId,
      modelId,
      {
        input_tokens: quote.input_tokens,
        output_tokens: quote.output_tokens,
      },
      EVERY_MODEL,
    ),
    input_tokens: quote.input_tokens,
    output_tokens: quote.output_tokens,
  };
}

/** A studio run as the history lists it: the API's list item, plus each output's content type. */
export type StudioRun = Awaited<ReturnType<JobViews["listItem"]>> & {
  outputs: { index: number; url: string; content_type: string }[];
};

/**
 * The person's studio runs in the account, newest first. `cursor` is the previous page's
 * next_cursor (the id of its last run); limit 1..100 (default 24).
 */
export async function studioRuns(
  ctx: StudioHistoryDeps,
  accountId: string,
  personId: string,
  o: { limit?: number; cursor?: string | null } = {},
): Promise<{ items: StudioRun[]; next_cursor: string | null }> {
  const limit = o.limit ?? 24;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new DomainError("validation_error", "limit must be an integer from 1 to 100.", { param: "limit" });
  if (o.cursor && !UUID_PATTERN.test(o.cursor))
    throw new DomainError("validation_error", "cursor must be the next_cursor of a previous page.", {
      param: "cursor",
    });
  const rows = await ctx.jobs.listByPerson(accountId, personId, limit + 1, o.cursor || null);
  const page = rows.slice(0, limit);
  return {
    items: await Promise.all(
      page.map(async (job) => {
        const item = await ctx.views.listItem(job);
        const types = job.status === "COMPLETED" ? await ctx.jobOutputs.rows(job.id) : [];
        return {
          ...item,
          outputs: types.map((t, i) => ({
            index: Number(t.idx),
            url: item.output_urls[i]!,
            content_type: t.content_type,
          })),
        };
      }),
    ),
    next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}

/** One run of the account for the run page; another account's (or a malformed id) is 404. */
export async function studioRunOf(
  ctx: { jobs: Pick<JobStore, "getOwned"> },
  accountId: string,
  id: string,
): Promise<JobRow> {
  const job = UUID_PATTERN.test(id) ? await ctx.jobs.getOwned(id, accountId) : null;
  if (!job) throw new DomainError("not_found", `No studio run ${id}.`, { param: "request_id" });
  return job;
}

/** A form whose fields can be read and replaced (the console's FormData). */
export interface MutableForm {
  get(name: string): unknown;
  set(name: string, value: string): void;
}

/**
 * The files a studio form carried without the script (the `upload:<field>` parts of its multipart
 * body): each stored as the script's upload stores it (createAccountUpload: allowed type, magic
 * bytes, `upload_max_bytes`, free disk; a file of the account, no key) and its file id put in its
 * URL field. An empty file input is skipped. A refused file is an error of its field (the API's
 * message); the field keeps what it held.
 */
export async function studioFormUploads(
  ctx: UploadDeps,
  accountId: string,
  model: Model,
  form: MutableForm,
): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  for (const f of studioFields(model)) {
    if (f.control !== "url") continue;
    const file = form.get(uploadFieldName(f.name));
    if (!(file instanceof Blob) || file.size === 0) continue;
    const request = new Request("http://studio.invalid/upload", {
      method: "POST",
      body: file,
      headers: {
        "content-type": file.type || "application/octet-stream",
        "content-length": String(file.size),
      },
    });
    try {
      form.set(f.name, (await createAccountUpload(ctx, accountId, request)).id);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      errors[f.name] = err.message;
    }
  }
  return errors;
}
