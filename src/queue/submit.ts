import type { LiveSettings } from "../config/schema.ts";
import type { Sql } from "../db/sql.ts";
import type { IdempotencyClaim } from "../idempotency/idempotency.ts";
import { type MediaJobDeps, type MediaSubmit, prepareMediaJob } from "../jobs/media.ts";
import { type OpenedOnce, type OpenJobDeps, openJob, openJobOnce } from "../jobs/open.ts";
import type { HoldRow } from "../ledger/ledger.ts";
import { JOB_POLL_MS, type JobEvents } from "./events.ts";
import { FINAL_STATUSES, type JobRow } from "./job-row.ts";
import type { JobStore } from "./job-store.ts";

/** A queue submit: a media door's input, and the Idempotency-Key of a /queue submit. */
export interface SubmitInput extends MediaSubmit {
  /** A /queue submit's claim, kept in the job's transaction; null for /run (claimed around it). */
  idempotency: IdempotencyClaim | null;
}

/** What the queue's doors use: opening a media job, the queued view as the stored answer. */
export interface SubmitDeps extends OpenJobDeps, MediaJobDeps {
  views: { queued(job: JobRow, at: { tx?: Sql; hold?: HoldRow | null }): Promise<unknown> };
}

/**
 * A /queue submit (and its fal alias): the media job prepared (prepareMediaJob) and opened under
 * the request's Idempotency-Key, the queued request (202) stored as its answer.
 */
export async function submitJob(deps: SubmitDeps, s: SubmitInput): Promise<OpenedOnce> {
  const job = await prepareMediaJob(deps, s);
  return await openJobOnce(deps, job, {
    claim: s.idempotency,
    answer: async (opened, tx) => ({
      status: 202,
      body: JSON.stringify(await deps.views.queued(opened, { tx })),
    }),
  });
}

/** What waiting for a job's final state uses: its events, its row, and the server's shutdown. */
export interface WaitDeps {
  events: Pick<JobEvents, "watch">;
  jobs: Pick<JobStore, "get">;
}

/** What /run uses: a media door's opening, the wait, its limit (read at each request) and the shutdown. */
export interface RunDeps extends OpenJobDeps, MediaJobDeps {
  jobs: OpenJobDeps["jobs"] & WaitDeps["jobs"];
  events: OpenJobDeps["events"] & WaitDeps["events"];
  live: Pick<LiveSettings, "limits">;
  shutdownSignal: AbortSignal;
}

/**
 * /run: a media job opened (its Idempotency-Key is claimed around the whole call by the caller),
 * then a wait for its final state (woken by its events) up to run_wait_seconds (or `waitMs`, for a
 * door whose clients expect the end: OpenAI's images and speech), the client's disconnect or the
 * server's shutdown; returns the job as it is then.
 */
export async function runJob(
  deps: RunDeps,
  s: MediaSubmit,
  signal: AbortSignal,
  waitMs = deps.live.limits.runWaitSeconds * 1000,
): Promise<JobRow> {
  const opened = await openJob(deps, await prepareMediaJob(deps, s));
  return await waitForFinal(deps, opened.value.id, waitMs, AbortSignal.any([signal, deps.shutdownSignal]));
}

/**
 * Waits for a job to reach a final state, up to `ms`: woken by its events (from whichever instance
 * changed it), and re-reading it at least every JOB_POLL_MS, the guarantee when a hint is lost.
 */
export async function waitForFinal(
  deps: WaitDeps,
  id: string,
  ms: number,
  signal?: AbortSignal,
): Promise<JobRow> {
  const deadline = Date.now() + ms;
  const watch = deps.events.watch(id); // before the first read: a change after it is not missed
  try {
    for (;;) {
      const job = (await deps.jobs.get(id))!;
      const left = deadline - Date.now();
      if (FINAL_STATUSES.includes(job.status) || left <= 0 || signal?.aborted) return job;
      await watch.wait(Math.min(left, JOB_POLL_MS), signal);
    }
  } finally {
    watch.close();
  }
}
