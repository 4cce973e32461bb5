import { log } from "../lib/log.ts";
import type { Provider } from "../providers/types.ts";
import type { JobStore } from "./jobs.ts";

/**
 * Jobs whose worker died (crash, kill -9, a stuck worker whose lease lapsed) and jobs past their
 * model's time limit. Run at start-up (every IN_PROGRESS job is orphaned then) and by a croner
 * sweep. A resumable job goes back to the queue (keeping its upstream id, so it is resumed, not
 * resubmitted); any other is failed and its hold released.
 */
export async function recoverJobs(
  jobs: JobStore,
  providers: Map<string, Provider>,
  now: number,
  atStartup: boolean,
): Promise<{ requeued: number; failed: number }> {
  let requeued = 0;
  let failed = 0;
  for (const job of await jobs.pastDeadline(now)) {
    if (await jobs.fail(job.id, "generation_failed", "The job exceeded the model's time limit.", now))
      failed++;
  }
  const orphans = atStartup
    ? await jobs.expiredLeases(Number.MAX_SAFE_INTEGER)
    : await jobs.expiredLeases(now);
  for (const job of orphans) {
    const provider = providers.get(job.provider);
    // A chat call lives in its HTTP request: when the process died, so did the request.
    if (job.kind !== "text" && provider?.resumable({ upstreamId: job.upstream_id })) {
      await jobs.appendLog(job.id, "warn", "worker lost; resuming the job", now);
      if (await jobs.requeue(job.id, now)) requeued++;
    } else if (
      await jobs.fail(
        job.id,
        "generation_failed",
        "The worker running this job was lost and the job cannot be resumed.",
        now,
      )
    ) {
      failed++;
    }
  }
  if (requeued || failed) log("info", "jobs recovered", { requeued, failed, at_startup: atStartup });
  return { requeued, failed };
}
