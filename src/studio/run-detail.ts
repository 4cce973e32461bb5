import type { JobStore } from "../queue/job-store.ts";
import { type RequestStores, requestDetail } from "../queue/requests.ts";
import { studioRunOf } from "./service.ts";

/**
 * What a studio run's page shows: the request's detail (status, price, logs, outputs with fresh
 * signed links) and, while it waits, how many jobs are ahead of it. Scoped to the account: another
 * account's run (or a malformed id) is 404.
 */
export type RunDetailDeps = RequestStores & { jobs: Pick<JobStore, "getOwned" | "queuePosition"> };

export async function studioRunDetail(deps: RunDetailDeps, accountId: string, id: string) {
  const job = await studioRunOf(deps, accountId, id);
  const detail = await requestDetail(deps, accountId, job.id);
  return { detail, ahead: deps.jobs.queuePosition(job) };
}
