import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import type { JobRow } from "./job-row.ts";
import {
  bad,
  checkedCursor,
  checkedFilters,
  checkedLimit,
  checkedRequestId,
  earlierBound,
  periodBounds,
  periodOf,
  type RequestFilters,
} from "./request-filters.ts";
import {
  holdsOf,
  type RequestDetail,
  type RequestStores,
  type RequestSummary,
  requestDetail,
  summaryOf,
} from "./requests.ts";

/**
 * The operator's requests across every account (/console/admin/requests): the account's list's
 * rows with their account, newest first, filtered by account, key, model, status, source, request
 * id and a date range (UTC days), paged by cursor. Ids are UUIDv7, so the date range is an id range
 * and every page walks an index in the list's order (JobStore.list): its cost does not grow with the
 * history. Reads only; one request's detail is the account's own page's (requestDetail).
 */
export interface AllRequestFilters extends RequestFilters {
  accountId?: string | null;
  /** One request by id (a UUID); the other filters still apply. */
  requestId?: string | null;
}

export type AccountRequest = RequestSummary & { account_name: string };

const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;

export async function listAllRequests(
  s: RequestStores,
  f: AllRequestFilters = {},
): Promise<{ items: AccountRequest[]; next_cursor: string | null }> {
  // The account's list's own checks (request-filters.ts), plus the account and the one request.
  const limit = checkedLimit(f.limit);
  const cursor = checkedCursor(f.cursor);
  const filters = checkedFilters(f);
  if (f.accountId && !ACCOUNT_ID.test(f.accountId)) bad("account_id", "account_id must be an account id.");
  const id = f.requestId ? checkedRequestId(f.requestId) : null;
  const bounds = periodBounds(periodOf(f));
  // One request: the id range [id, id~) inside the period's and the cursor's.
  const since = id && !(bounds.since && bounds.since > id) ? id : bounds.since;
  const before = earlierBound(earlierBound(cursor, bounds.before), id ? `${id}~` : null);
  const rows = await s.jobs.list(f.accountId || null, {
    ...filters,
    ...bounds,
    since,
    limit: limit + 1,
    before,
  });
  const page = rows.slice(0, limit);
  const keyNames = new Map<string, string | null>();
  const accountNames = new Map<string, string>();
  for (const job of page) {
    if (job.key_id !== null && !keyNames.has(job.key_id))
      keyNames.set(job.key_id, (await s.accounts.findKey(job.key_id))?.name ?? null);
    if (!accountNames.has(job.account_id))
      accountNames.set(job.account_id, (await s.accounts.getAccount(job.account_id))?.name ?? job.account_id);
  }
  const now = Date.now();
  const holds = await holdsOf(s, page);
  const items = await Promise.all(
    page.map(async (job) => ({
      ...(await summaryOf(
        s,
        job,
        job.key_id === null ? null : (keyNames.get(job.key_id) ?? null),
        now,
        holds.get(job.hold_id) ?? null,
      )),
      account_name: accountNames.get(job.account_id)!,
    })),
  );
  return { items, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
}

/** Any account's request with everything its page shows, and its account; unknown ids are 404. */
export async function anyRequestDetail(
  s: RequestStores,
  requestId: string,
): Promise<{ detail: RequestDetail; account: { id: string; name: string }; route: OperatorRoute }> {
  const job = UUID_PATTERN.test(requestId) ? await s.jobs.get(requestId) : null;
  if (!job) throw new DomainError("not_found", `No request ${requestId}.`, { param: "request_id" });
  const account = await s.accounts.getAccount(job.account_id);
  return {
    detail: await requestDetail(s, job.account_id, requestId),
    account: { id: job.account_id, name: account?.name ?? job.account_id },
    route: operatorRoute(job),
  };
}

/** Which route ran a job and what it cost upstream: operators' views only, never a client's. */
export interface OperatorRoute {
  /** The provider of the route the job runs or ran on. */
  provider: string;
  /** Its index in the model's routes (migration 025). */
  index: number;
  /** Micro-USD; null = unknown (no cost configured, failed, or not settled yet). */
  cost_usd_micro: string | null;
}

/**
 * One request as the operator API shows it (GET /admin/v1/requests/{id}): the client's own record,
 * its account, and the route that ran it with its upstream cost. Unknown ids are 404.
 */
export async function operatorRequest(
  s: Pick<RequestStores, "jobs" | "views">,
  requestId: string,
): Promise<{ account_id: string; route: OperatorRoute; record: Record<string, unknown> }> {
  const job = UUID_PATTERN.test(requestId) ? await s.jobs.get(requestId) : null;
  if (!job) throw new DomainError("not_found", `No request ${requestId}.`, { param: "request_id" });
  const record = (await s.views.record(job)) as Record<string, unknown>;
  return { account_id: job.account_id, route: operatorRoute(job), record };
}

export function operatorRoute(job: JobRow): OperatorRoute {
  return {
    provider: job.provider,
    index: Number(job.route),
    cost_usd_micro: job.cost_usd_micro === null ? null : String(job.cost_usd_micro),
  };
}
