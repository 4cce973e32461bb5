import type { Principal } from "../accounts/store.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN as UUID } from "../lib/ids.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import type { QueueServices } from "../server/context.ts";
import type { JobRow } from "./job-row.ts";
import type { JobStore } from "./job-store.ts";
import { checkedFilters } from "./request-filters.ts";

/**
 * A key's requests by id, as the API, its fal alias routes and the console read them: every
 * lookup is scoped to the key's account, so another account's request is 404 like an unknown one.
 */
export interface OwnershipDeps {
  jobs: Pick<JobStore, "getOwned" | "get" | "cancel" | "list">;
}

/** Whose requests: a key's account (the API) or the account a console person is looking at. */
export type Owner = Pick<Principal, "accountId">;

/** A request id from the path: malformed is 400, another account's or unknown is 404. */
export async function ownedJob(deps: OwnershipDeps, principal: Owner, id: string): Promise<JobRow> {
  if (!UUID.test(id))
    throw new DomainError("validation_error", "request_id must be a UUID.", { param: "request_id" });
  const job = await deps.jobs.getOwned(id, principal.accountId);
  if (!job) throw new DomainError("not_found", `No request ${id}.`, { param: "request_id" });
  return job;
}

/** The owned request once COMPLETED; before that 409 request_not_ready naming its status. */
export async function completedJob(deps: OwnershipDeps, principal: Principal, id: string): Promise<JobRow> {
  const job = await ownedJob(deps, principal, id);
  if (job.status !== "COMPLETED") {
    throw new DomainError(
      "request_not_ready",
      `The request is ${job.status}; the response can be read once it is COMPLETED.`,
      { extra: { request_id: job.id, status: job.status } },
    );
  }
  return job;
}

/**
 * Cancels an owned request if it is still IN_QUEUE (the hold is released in the same transaction,
 * JobStore.cancel); otherwise says what it is now, for the caller to answer in its own words.
 * Every door's cancel and the console's `Cancel request` call it.
 */
export async function tryCancel(
  deps: OwnershipDeps,
  principal: Owner,
  id: string,
): Promise<{ job: JobRow; cancelled: true } | { job: JobRow; cancelled: false; now: JobRow }> {
  const job = await ownedJob(deps, principal, id);
  if (await deps.jobs.cancel(job.id, Date.now())) return { job, cancelled: true };
  return { job, cancelled: false, now: (await deps.jobs.get(job.id))! };
}

/** POST /v1/requests/{id}/cancel: 409 not_cancellable unless the request was IN_QUEUE. */
export async function cancelRequest(deps: OwnershipDeps, principal: Principal, id: string) {
  const r = await tryCancel(deps, principal, id);
  if (!r.cancelled) {
    throw new DomainError(
      "not_cancellable",
      `The request is ${r.now.status}; only IN_QUEUE requests can be cancelled.`,
      { extra: { request_id: r.job.id, status: r.now.status } },
    );
  }
  return { request_id: r.job.id, status: "CANCELLED" as const };
}

/** One page of the account's requests, newest first, as list items (no input). */
export async function listRequests(
  deps: OwnershipDeps & { views: Pick<QueueServices["views"], "listItem"> },
  accountId: string,
  o: { limit: number; before: string | null; status?: string; modelId?: string },
) {
  // The console's filter checks (a model id with a control character is a 400 on both databases).
  const { status, modelId } = checkedFilters({ status: o.status, modelId: o.modelId });
  const rows = await deps.jobs.list(accountId, { limit: o.limit + 1, before: o.before, status, modelId });
  const { page, next_cursor } = keysetPage(rows, o.limit);
  return { data: await Promise.all(page.map(async (j) => await deps.views.listItem(j))), next_cursor };
}
