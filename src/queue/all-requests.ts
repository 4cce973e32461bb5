import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import {
  checkRequestFilters,
  type RequestDetail,
  type RequestFilters,
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
  /** First and last day (UTC) of the range, YYYY-MM-DD, both included. */
  from?: string | null;
  to?: string | null;
}

export type AccountRequest = RequestSummary & { account_id: string; account_name: string };

const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

function bad(param: string, message: string): never {
  throw new DomainError("validation_error", message, { param });
}

/** A UTC day's first millisecond, or 400. */
function dayStart(text: string, param: string): number {
  const ms = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text)
    bad(param, `${param} must be a date such as 2026-11-27.`);
  return ms;
}

/** The smallest UUIDv7 text of a millisecond: its 48-bit time in hex, as the id's first 13 characters. */
export function idAtMs(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

export async function listAllRequests(
  s: RequestStores,
  f: AllRequestFilters = {},
): Promise<{ items: AccountRequest[]; next_cursor: string | null }> {
  const limit = checkRequestFilters(f);
  if (f.accountId && !ACCOUNT_ID.test(f.accountId)) bad("account_id", "account_id must be an account id.");
  if (f.requestId && !UUID_PATTERN.test(f.requestId)) bad("request_id", "request_id must be a request id.");
  const from = f.from ? dayStart(f.from, "from") : null;
  const to = f.to ? dayStart(f.to, "to") + DAY_MS : null;
  if (from !== null && to !== null && from >= to) bad("to", "to must be the same day as from or later.");
  // The page's upper bound: the cursor, the end of the range, or just above the one id asked for.
  const bounds = [f.cursor, to === null ? null : idAtMs(to), f.requestId ? `${f.requestId}~` : null];
  const before = bounds.filter((b): b is string => !!b).sort()[0] ?? null;
  const rows = await s.jobs.list(f.accountId || null, {
    limit: limit + 1,
    before,
    after: f.requestId || (from === null ? undefined : idAtMs(from)),
    status: f.status || undefined,
    modelId: f.modelId || undefined,
    keyId: f.keyId || undefined,
    source: (f.source || undefined) as "API" | "STUDIO" | undefined,
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
  const items = await Promise.all(
    page.map(async (job) => ({
      ...(await summaryOf(s, job, job.key_id === null ? null : (keyNames.get(job.key_id) ?? null))),
      account_id: job.account_id,
      account_name: accountNames.get(job.account_id)!,
    })),
  );
  return { items, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
}

/** Any account's request with everything its page shows, and its account; unknown ids are 404. */
export async function anyRequestDetail(
  s: RequestStores,
  requestId: string,
): Promise<{ detail: RequestDetail; account: { id: string; name: string } }> {
  const job = UUID_PATTERN.test(requestId) ? await s.jobs.get(requestId) : null;
  if (!job) throw new DomainError("not_found", `No request ${requestId}.`, { param: "request_id" });
  const account = await s.accounts.getAccount(job.account_id);
  return {
    detail: await requestDetail(s, job.account_id, requestId),
    account: { id: job.account_id, name: account?.name ?? job.account_id },
  };
}
