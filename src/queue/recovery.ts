import { log } from "../lib/log.ts";
import type { Provider } from "../providers/types.ts";
import type { JobLogStore } from "./job-log-store.ts";
import type { JobStore } from "./job-store.ts";

/**
 * Jobs whose worker died (crash, kill -9, a stuck worker whose lease lapsed) and jobs past their
 * model's time limit. Run at start-up and by a croner sweep (on one instance: the leader).
 * `allRunningOrphaned` (start-up on SQLite, the only instance) takes every IN_PROGRESS job; else
 * only those whose lease lapsed, since other instances' workers hold live leases, and (at start-up)
 * those leased by this instance's earlier life: owners starting with one of `ownLeases` (its
 * workers' and its in-request chat calls'). A resumable job goes back to the queue (keeping its upstream id, so it is resumed, not
 * resubmitted); any other is failed and its hold released.
 */
export async function recoverJobs(
  stores: { jobs: JobStore; jobLogs: JobLogStore },
  providers: Map<string, Provider>,
  now: number,
  allRunningOrphaned: boolean,
  signal?: AbortSignal,
  ownLeases: readonly string[] = [],
): Promise<{ requeued: number; failed: number }> {
  const { jobs, jobLogs } = stores;
  let requeued = 0;
  let failed = 0;
  for (const job of await jobs.pastDeadline(now)) {
    if (signal?.aborted) break;
    if (await jobs.fail(job.id, "generation_failed", "The job exceeded the model's time limit.", now))
      failed++;
  }
  let orphans = allRunningOrphaned
    ? await jobs.expiredLeases(Number.MAX_SAFE_INTEGER)
    : await jobs.expiredLeases(now);
  for (const prefix of ownLeases) {
    const seen = new Set(orphans.map((j) => j.id));
    orphans = [...orphans, ...(await jobs.leasedBy(prefix)).filter((j) => !seen.has(j.id))];
  }
  for (const job of orphans) {
    if (signal?.aborted) break;
    const provider = providers.get(job.provider);
    // Fenced by the lease read above: a job claimed again meanwhile (by a worker of any
    // instance, after another sweep requeued it) is left to that worker.
    const lease = job.lease_owner === null ? jobs : jobs.fenced(job.lease_owner, job.attempt);
    // A chat call lives in its HTTP request: when the process died, so did the request.
    if (job.kind !== "text" && provider?.resumable({ upstreamId: job.upstream_id })) {
      if (await lease.requeue(job.id, now)) {
        await jobLogs.append(job.id, "warn", "worker lost; resuming the job", now);
        requeued++;
      }
    } else if (
      await lease.fail(
        job.id,
        "generation_failed",
        "The worker running this job was lost and the job cannot be resumed.",
        now,
      )
    ) {
      failed++;
    }
  }
  if (requeued || failed) log("info", "jobs recovered", { requeued, failed, at_startup: allRunningOrphaned });
  return { requeued, failed };
}
