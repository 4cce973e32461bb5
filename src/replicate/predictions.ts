/**
 * Replicate's predictions API over gengate's queue (docs/clients.md "Replicate"): a create opens ONE
 * queue job through src/jobs exactly as POST /v1/queue does (same hold, limits, Idempotency-Key),
 * the other calls read, cancel and list the key's account's jobs as predictions.
 */
import type { Principal } from "../accounts/store.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { IdempotencyClaim, StoredResponse } from "../idempotency/idempotency.ts";
import { type MediaJobDeps, prepareMediaJob } from "../jobs/media.ts";
import { type JobToOpen, type Opener, type OpenJobDeps, openJobOnce } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import type { JobRow } from "../queue/job-row.ts";
import { type OwnershipDeps, ownedJob, tryCancel } from "../queue/ownership.ts";
import { type WaitDeps, waitForFinal } from "../queue/submit.ts";
import {
  modelVersion,
  openedPrediction,
  type Prediction,
  type PredictionViewDeps,
  predictionView,
} from "./prediction-view.ts";

/** Replicate's webhook events; gengate sends the one at the end (`completed`). */
export const WEBHOOK_EVENTS = ["start", "output", "logs", "completed"] as const;

/** Replicate's longest `Prefer: wait` and its default, in seconds (its sync API's limit). */
export const MAX_WAIT_SECONDS = 60;

/**
 * `Prefer: wait` or `wait=n`: seconds to hold the create's answer; null without it. The client sends
 * `wait=${max(1, ceil(n))}` (replicate lib/predictions.js), which may exceed 60: clamped to 60.
 */
export function preferWait(header: string | null): number | null {
  if (header === null) return null;
  for (const part of header.split(/[,;]/)) {
    const [name, value] = part
      .trim()
      .split("=", 2)
      .map((s) => s.trim());
    if (name?.toLowerCase() !== "wait") continue;
    if (value === undefined || value === "") return MAX_WAIT_SECONDS;
    if (!/^[0-9]{1,6}$/.test(value) || Number(value) < 1) {
      throw new DomainError("validation_error", "Prefer: wait=n takes whole seconds from 1 to 60.", {
        param: "Prefer",
      });
    }
    return Math.min(Number(value), MAX_WAIT_SECONDS);
  }
  return null;
}

/** What a create uses: opening a media job, waiting for it, rendering it. */
export interface CreateDeps extends OpenJobDeps, MediaJobDeps, PredictionViewDeps {
  catalog: Pick<Catalog, "get" | "models">;
  jobs: OpenJobDeps["jobs"] & WaitDeps["jobs"];
  events: OpenJobDeps["events"] & WaitDeps["events"];
  shutdownSignal: AbortSignal;
}

export interface CreatePrediction {
  who: Opener;
  /** From the path (POST /models/{owner}/{name}/predictions), or null: `version` in the body names it. */
  model: string | null;
  body: Record<string, unknown>;
  claim: IdempotencyClaim | null;
  /** Prefer: wait, in seconds; null answers at once. */
  waitSeconds: number | null;
  signal: AbortSignal;
}

/**
 * Creates a prediction: the body's `input` is the model input, `webhook` its webhook (unless
 * `webhook_events_filter` leaves out `completed`, the one event sent). Opened with openJobOnce under
 * the Idempotency-Key (the just-opened prediction is the stored answer); a repeat opens nothing and
 * reads the key's job. With Prefer: wait, the answer waits for the job's end up to that many seconds.
 */
export async function createPrediction(
  deps: CreateDeps,
  c: CreatePrediction,
): Promise<{ prediction: Prediction; replayed: boolean }> {
  const modelId = c.model ?? modelOfVersion(deps, c.body.version);
  const input = c.body.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new DomainError("validation_error", "input must be an object: the model input.", {
      param: "input",
    });
  }
  const webhook = webhookOf(c.body);
  const prepared = await prepareMediaJob(deps, { who: c.who, modelId, body: input, queryWebhook: webhook });
  // Replicate's clients read the prediction in a webhook (the job's record otherwise).
  const job: JobToOpen = { ...prepared, webhookBody: webhook !== null ? "prediction" : "record" };
  const opened = await openJobOnce(deps, job, {
    claim: c.claim,
    answer: (j): StoredResponse => ({
      status: 201,
      body: JSON.stringify(openedPrediction(deps, j)),
    }),
  });
  const id = opened.replay ? (JSON.parse(opened.replay.body) as { id: string }).id : opened.value.id;
  let row: JobRow | null = opened.replay ? null : opened.value;
  if (c.waitSeconds !== null) {
    const signal = AbortSignal.any([c.signal, deps.shutdownSignal]);
    row = await waitForFinal(deps, id, c.waitSeconds * 1000, signal);
  }
  row ??= (await deps.jobs.get(id))!;
  const prediction = await predictionView(deps, row);
  // replicate.run() polls only a prediction still "starting" after a blocking create (replicate
  // index.js run: isDone = status !== "starting"); a running one would end its wait with no output.
  if (prediction.status === "processing") prediction.status = "starting";
  return { prediction, replayed: opened.replay !== null };
}

/** The webhook of a create; null when none or `completed` (the one event sent) is filtered out. */
function webhookOf(body: Record<string, unknown>): string | null {
  const { webhook, webhook_events_filter: filter } = body;
  if (filter !== undefined) {
    const events: readonly unknown[] = WEBHOOK_EVENTS;
    if (!Array.isArray(filter) || !filter.every((e) => events.includes(e))) {
      throw new DomainError(
        "validation_error",
        `webhook_events_filter must be a list of ${WEBHOOK_EVENTS.join(", ")}.`,
        { param: "webhook_events_filter" },
      );
    }
  }
  if (webhook === undefined || webhook === null) return null;
  if (typeof webhook !== "string") {
    throw new DomainError("bad_webhook_url", "webhook must be a string URL.", { param: "webhook" });
  }
  if (Array.isArray(filter) && !filter.includes("completed")) return null;
  return webhook;
}

/**
 * The model a `version` names: "owner/name", "owner/name:<version>" (the version must be that
 * model's), or the version id alone (what replicate.run("owner/name:<version>") sends).
 */
function modelOfVersion(deps: { catalog: Pick<Catalog, "get" | "models"> }, version: unknown): string {
  if (typeof version !== "string" || version === "") {
    throw new DomainError("validation_error", "version is required: a model's version id or owner/name.", {
      param: "version",
    });
  }
  const colon = version.indexOf(":");
  const id = colon < 0 ? version : version.slice(0, colon);
  if (id.includes("/")) {
    const model = deps.catalog.get(id);
    if (model && colon >= 0 && version.slice(colon + 1) !== modelVersion(id)) {
      throw new DomainError("validation_error", `${version} is not a version of ${id}; see GET /v1/models.`, {
        param: "version",
      });
    }
    return id;
  }
  const model = deps.catalog.models.find((m) => modelVersion(m.id) === version);
  if (!model) {
    throw new DomainError("validation_error", `No model has the version ${version}; see GET /v1/models.`, {
      param: "version",
    });
  }
  return model.id;
}

/** What reading, cancelling and listing use: the key's jobs and their rendering. */
export interface PredictionReadDeps extends OwnershipDeps, PredictionViewDeps {}

/** GET /predictions/{id}: another account's id or an unknown one is 404. */
export async function getPrediction(deps: PredictionReadDeps, p: Principal, id: string): Promise<Prediction> {
  return await predictionView(deps, await ownedJob(deps, p, id));
}

/**
 * POST /predictions/{id}/cancel: a queued job is cancelled and its hold released (as the queue's
 * cancel); an ended one is answered as it is (Replicate's cancel of an ended prediction changes
 * nothing); a running one is 409 not_cancellable, since gengate cannot stop it and will charge it.
 */
export async function cancelPrediction(
  deps: PredictionReadDeps,
  p: Principal,
  id: string,
): Promise<Prediction> {
  const r = await tryCancel(deps, p, id);
  const now = r.cancelled ? (await deps.jobs.get(id))! : r.now;
  if (now.status === "IN_PROGRESS") {
    throw new DomainError(
      "not_cancellable",
      "The prediction is processing; only a starting one can be canceled.",
      {
        extra: { id, status: "processing" },
      },
    );
  }
  return await predictionView(deps, now);
}

/**
 * GET /predictions: the account's jobs, newest first, in Replicate's page shape; `next` is the URL
 * of the next page (keyset: the id of this page's last job), `previous` is always null.
 */
export async function listPredictions(
  deps: PredictionReadDeps,
  accountId: string,
  o: { limit: number; before: string | null; explicitLimit: boolean },
) {
  const rows = await deps.jobs.list(accountId, { limit: o.limit + 1, before: o.before });
  const { page, next_cursor } = keysetPage(rows, o.limit);
  const limit = o.explicitLimit ? `&limit=${o.limit}` : "";
  return {
    next: next_cursor === null ? null : `${deps.publicUrl}/v1/predictions?cursor=${next_cursor}${limit}`,
    previous: null,
    results: await Promise.all(page.map(async (j) => await predictionView(deps, j, false))),
  };
}
