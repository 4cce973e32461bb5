import type { AccountStore, Currency } from "../accounts/store.ts";
import type { JobOutputStore } from "../files/job-output-store.ts";
import type { HoldRow, Ledger } from "../ledger/ledger.ts";
import { CSV_PAGE_ROWS, type CsvValue, csvStream, keysetPages } from "../lib/csv.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { formatMicro } from "../lib/money.ts";
import type { QueueServices } from "../server/context.ts";
import type { JobLogStore } from "./job-log-store.ts";
import type { JobRow, JobStatus } from "./job-row.ts";
import { DAY_MS, type JobStats, type JobStatsStore } from "./job-stats-store.ts";
import type { JobStore } from "./job-store.ts";
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

/**
 * The console's requests: every job of an account (API and studio, media and chat), newest first,
 * filtered by key, model, status and source, and one request's detail. Reads go through JobStore
 * (jobs), JobLogStore (job_logs), JobOutputStore (job_outputs), the ledger's holds and the queue's views (fresh signed links).
 * Amounts are bigint micro-units; times RFC 3339 (UTC) strings.
 */
export interface RequestStores {
  accounts: AccountStore;
  ledger: Ledger;
  jobs: JobStore;
  jobLogs: JobLogStore;
  jobOutputs: JobOutputStore;
  views: QueueServices["views"];
}

export interface RequestPrice {
  currency: Currency;
  /** The quote, in micro-USD (prices are quoted in USD). */
  quoted_usd_micro: bigint;
  /** Held at submit, in the account currency. */
  reserved_micro: bigint | null;
  /** null while the hold is open; 0 once released (failed, cancelled). */
  charged_micro: bigint | null;
}

/** How long a request took: submit to end (or to now while it is open), and its two parts. */
export interface RequestTiming {
  /** Submit to end, or to now for a live request. */
  total_ms: number;
  /** Submit to its first start (or to its end or now, never started). */
  queued_ms: number;
  /** First start to end (or to now); null when it never started. */
  running_ms: number | null;
  /** IN_QUEUE or IN_PROGRESS: the figures grow. */
  live: boolean;
}

export interface RequestSummary {
  id: string;
  /** The account the request belongs to (an operator's list across accounts names it). */
  account_id: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  timing: RequestTiming;
  status: JobStatus;
  model_id: string;
  kind: string;
  source: "API" | "STUDIO";
  key_id: string | null;
  /** The key's name (null: no key, or a key of no name). */
  key_name: string | null;
  error_code: string | null;
  price: RequestPrice;
}

export interface RequestPage {
  items: RequestSummary[];
  next_cursor: string | null;
}

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** A job's durations at `now` (epoch ms); never negative (clocks of several instances may differ). */
export function timingOf(
  job: Pick<JobRow, "status" | "created_at" | "started_at" | "completed_at">,
  now: number,
) {
  const end = job.completed_at === null ? now : Number(job.completed_at);
  const created = Number(job.created_at);
  const started = job.started_at === null ? null : Number(job.started_at);
  const span = (a: number, b: number) => Math.max(0, b - a);
  return {
    total_ms: span(created, end),
    queued_ms: span(created, started ?? end),
    running_ms: started === null ? null : span(started, end),
    live: job.status === "IN_QUEUE" || job.status === "IN_PROGRESS",
  } satisfies RequestTiming;
}

async function priceOf(s: Pick<RequestStores, "ledger">, job: JobRow): Promise<RequestPrice> {
  return priceFrom(job, await s.ledger.getHold(job.hold_id));
}

/** A job's price from its hold (null: none found). */
function priceFrom(job: JobRow, hold: HoldRow | null): RequestPrice {
  const quote = JSON.parse(job.quote) as { amount_usd_micro?: string };
  return {
    currency: hold?.currency ?? "USD",
    quoted_usd_micro: BigInt(quote.amount_usd_micro ?? hold?.quoted_usd_micro ?? 0n),
    reserved_micro: hold ? hold.amount_micro : null,
    charged_micro:
      hold?.status === "settled" ? (hold.charged_micro ?? 0n) : hold?.status === "released" ? 0n : null,
  };
}

/**
 * One page of an account's requests, newest first. Filters on another account's key simply match
 * nothing: every query is scoped to the account. Bad filter values are 400 validation_error.
 */
export async function listRequests(
  s: RequestStores,
  accountId: string,
  f: RequestFilters = {},
  now = Date.now(),
): Promise<RequestPage> {
  const limit = checkedLimit(f.limit);
  const cursor = checkedCursor(f.cursor);
  const filters = checkedFilters(f);
  const bounds = periodBounds(periodOf(f));
  const rows = await s.jobs.list(accountId, {
    ...filters,
    ...bounds,
    limit: limit + 1,
    before: earlierBound(cursor, bounds.before),
  });
  const page = rows.slice(0, limit);
  return {
    items: await summaries(s, accountId, page, now),
    next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}

/** A job as a row of a requests list (the account's, and the operator's across accounts), at `now`. */
export async function summaryOf(
  s: Pick<RequestStores, "ledger">,
  job: JobRow,
  keyName: string | null,
  now = Date.now(),
  /** The job's hold when the caller read the page's holds at once (holdsOf); else it is read here. */
  hold?: HoldRow | null,
): Promise<RequestSummary> {
  return {
    id: job.id,
    account_id: job.account_id,
    created_at: iso(job.created_at)!,
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
    timing: timingOf(job, now),
    status: job.status,
    model_id: job.model_id,
    kind: job.kind,
    source: job.source,
    key_id: job.key_id,
    key_name: keyName,
    error_code: job.error_code,
    price: hold === undefined ? await priceOf(s, job) : priceFrom(job, hold),
  };
}

/** The holds of a page of jobs, in one statement (not one per row), by hold id. */
export async function holdsOf(
  s: Pick<RequestStores, "ledger">,
  jobs: readonly JobRow[],
): Promise<Map<string, HoldRow>> {
  return new Map((await s.ledger.getHolds(jobs.map((j) => j.hold_id))).map((h) => [h.id, h]));
}

/** The columns of the requests CSV (/console/requests.csv). */
export const REQUESTS_CSV_HEADER = [
  "id",
  "created_at",
  "completed_at",
  "status",
  "source",
  "key_id",
  "key_name",
  "model_id",
  "duration_ms",
  "price",
  "price_micro",
  "currency",
  "error_code",
] as const;

/**
 * Every request of the account under the list's filters (all but the cursor), newest first, as a
 * CSV stream: keyset pages of CSV_PAGE_ROWS jobs by the list's own index walk (JobStore.list), each
 * page's holds in one statement. The filters are checked before the first byte (a bad one is the
 * list's 400). `price` is what the request was charged (0 released, empty while it runs) and
 * `duration_ms` submit to end (empty while it runs). A row is the job as its page read it: a job
 * that ends while the file streams shows as it was when its page was read.
 */
export async function requestsCsv(
  s: Pick<RequestStores, "accounts" | "ledger" | "jobs">,
  accountId: string,
  f: Omit<RequestFilters, "limit" | "cursor"> = {},
): Promise<ReadableStream<Uint8Array>> {
  const filters = checkedFilters(f);
  const bounds = periodBounds(periodOf(f));
  const names = new Map((await s.accounts.listKeys(accountId)).map((k) => [k.id, k.name]));
  const read = async (cursor: string | null) => {
    const jobs = await s.jobs.list(accountId, {
      ...filters,
      ...bounds,
      limit: CSV_PAGE_ROWS + 1,
      before: earlierBound(cursor, bounds.before),
    });
    const page = jobs.slice(0, CSV_PAGE_ROWS);
    const holds = await holdsOf(s, page);
    return {
      rows: page.map((j) => requestCsvRecord(j, names, holds.get(j.hold_id) ?? null)),
      next: jobs.length > CSV_PAGE_ROWS ? page[page.length - 1]!.id : null,
    };
  };
  return csvStream(REQUESTS_CSV_HEADER, keysetPages(read));
}

function requestCsvRecord(job: JobRow, names: Map<string, string>, hold: HoldRow | null): CsvValue[] {
  const price = priceFrom(job, hold);
  return [
    job.id,
    iso(job.created_at),
    iso(job.completed_at),
    job.status,
    job.source,
    job.key_id,
    job.key_id === null ? null : (names.get(job.key_id) ?? null),
    job.model_id,
    job.completed_at === null ? null : timingOf(job, 0).total_ms,
    price.charged_micro === null ? null : formatMicro(price.charged_micro),
    price.charged_micro,
    price.currency,
    job.error_code,
  ];
}

/** An account's jobs as list rows: the key's name, the price and the durations at `now`. */
async function summaries(
  s: RequestStores,
  accountId: string,
  jobs: JobRow[],
  now: number,
): Promise<RequestSummary[]> {
  if (jobs.length === 0) return [];
  const names = new Map((await s.accounts.listKeys(accountId)).map((k) => [k.id, k.name]));
  const holds = await holdsOf(s, jobs);
  return await Promise.all(
    jobs.map((job) =>
      summaryOf(
        s,
        job,
        job.key_id === null ? null : (names.get(job.key_id) ?? null),
        now,
        holds.get(job.hold_id) ?? null,
      ),
    ),
  );
}

/**
 * The rows of these requests as they are now, for the list's live refresh: only the account's
 * (another account's id or an unknown one is simply left out), at most 100, in the order given.
 */
export async function requestRows(
  s: RequestStores,
  accountId: string,
  ids: readonly string[],
  now = Date.now(),
): Promise<RequestSummary[]> {
  if (ids.length > 100) bad("ids", "At most 100 requests are refreshed at once.");
  const jobs: JobRow[] = [];
  for (const id of new Set(ids)) {
    const job = UUID_PATTERN.test(id) ? await s.jobs.getOwned(id, accountId) : null;
    if (job) jobs.push(job);
  }
  return await summaries(s, accountId, jobs, now);
}

/** A request id typed into the filter: the account's request's id; malformed 400, another's or unknown 404. */
export async function findRequest(
  s: Pick<RequestStores, "jobs">,
  accountId: string,
  id: string,
): Promise<string> {
  const v = checkedRequestId(id);
  const job = await s.jobs.getOwned(v, accountId);
  if (!job) throw new DomainError("not_found", `No request ${v} in this account.`, { param: "request_id" });
  return job.id;
}

/** The most UTC days the figures above the list cover, and the days they cover without a From. */
export const STATS_MAX_DAYS = 31;

export interface RequestStats extends JobStats {
  /** The UTC midnights the figures cover (RFC 3339): start included, end excluded. */
  from: string;
  until: string;
  /** Whether the filter had a From or a To (else the last STATS_MAX_DAYS UTC days, today included). */
  ranged: boolean;
  /** True when the range was longer than STATS_MAX_DAYS (or had no From): only its end is counted. */
  clipped: boolean;
}

/**
 * The figures over the list's filter (every filter but the cursor): how many requests, failures
 * among finished ones, and latency. The period is whole UTC days (the rollup's, JobStatsStore): the
 * filter's date range, at most its last STATS_MAX_DAYS days (without a To, up to the end of today),
 * so the figures read at most that many days of the rollup whatever the account's history.
 */
export async function requestStats(
  s: { jobStats: Pick<JobStatsStore, "stats"> },
  accountId: string,
  f: RequestFilters = {},
  now = Date.now(),
): Promise<RequestStats> {
  const filters = checkedFilters(f);
  const p = periodOf(f);
  const endMs = p.endMs ?? (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  const earliest = endMs - STATS_MAX_DAYS * DAY_MS;
  const clipped = p.startMs === null || p.startMs < earliest;
  const startMs = clipped ? earliest : p.startMs!;
  const stats = await s.jobStats.stats({
    accountId,
    ...filters,
    fromDay: startMs / DAY_MS,
    untilDay: endMs / DAY_MS,
  });
  return {
    ...stats,
    from: new Date(startMs).toISOString(),
    until: new Date(endMs).toISOString(),
    ranged: p.startMs !== null || p.endMs !== null,
    clipped,
  };
}

/** One step of a request's life, in time order. */
export interface TimelineEvent {
  at: string;
  /** submitted, started, log, COMPLETED, FAILED or CANCELLED. */
  event: "submitted" | "started" | "log" | "COMPLETED" | "FAILED" | "CANCELLED";
  /** Logs: the level (info, warn, ...); null otherwise. */
  level: string | null;
  message: string | null;
}

export interface RequestOutput {
  index: number;
  /** A fresh signed link (valid 24 hours from this read). */
  url: string;
  content_type: string;
  size: number;
  expires_at: string;
}

export interface RequestDetail extends RequestSummary {
  input: unknown;
  attempts: number;
  error: { code: string; message: string } | null;
  price: RequestPrice & {
    unit: string | null;
    units: string | null;
    actual_units: string | null;
    charged_usd_micro: bigint | null;
    /** micro-RUB per USD fixed at submit (RUB accounts), else null. */
    fx_rate_micro: bigint | null;
  };
  timeline: TimelineEvent[];
  /** The model's output with media replaced by signed links (COMPLETED), else null. */
  output: unknown;
  outputs: RequestOutput[];
  webhook: { url: string; status: string; attempts: number } | null;
  /** Chat calls: the token counts they were billed on. */
  usage: { prompt_tokens: number; completion_tokens: number } | null;
}

/** A request of this account with everything its page shows; another account's id is 404 not_found. */
export async function requestDetail(
  s: RequestStores,
  accountId: string,
  requestId: string,
): Promise<RequestDetail> {
  const job = UUID_PATTERN.test(requestId) ? await s.jobs.getOwned(requestId, accountId) : null;
  if (!job) throw new DomainError("not_found", `No request ${requestId}.`, { param: "request_id" });
  const record = await s.views.record(job);
  const hold = await s.ledger.getHold(job.hold_id);
  const quote = JSON.parse(job.quote) as { unit?: string; units?: string };
  const key = job.key_id
    ? (await s.accounts.listKeys(accountId)).find((k) => k.id === job.key_id)
    : undefined;

  const timeline: TimelineEvent[] = [
    { at: iso(job.created_at)!, event: "submitted", level: null, message: null },
  ];
  if (job.started_at !== null)
    timeline.push({ at: iso(job.started_at)!, event: "started", level: null, message: null });
  for (const l of await s.jobLogs.list(job.id))
    timeline.push({ at: iso(l.at)!, event: "log", level: l.level, message: l.message });
  if (job.completed_at !== null) {
    timeline.push({
      at: iso(job.completed_at)!,
      event: job.status as "COMPLETED",
      level: null,
      message: job.status === "FAILED" ? (job.error_message ?? job.error_code) : null,
    });
  }
  // Stable: same-instant events keep their order (submitted before started before logs).
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));

  const completed = job.status === "COMPLETED";
  const urls = record.output_urls;
  const outputs = completed
    ? (await s.jobOutputs.rows(job.id)).map((o, i) => ({
        index: Number(o.idx),
        url: urls[i]!,
        content_type: o.content_type,
        size: Number(o.size),
        expires_at: iso(o.expires_at)!,
      }))
    : [];
  const summary = await summaryOf(s, job, key?.name ?? null);
  return {
    ...summary,
    error: record.error,
    attempts: Number(job.attempt),
    input: record.input,
    price: {
      ...summary.price,
      unit: quote.unit ?? null,
      units: quote.units ?? null,
      actual_units: job.actual_units,
      charged_usd_micro:
        hold?.status === "settled" ? (hold.charged_usd_micro ?? 0n) : hold?.status === "released" ? 0n : null,
      fx_rate_micro: hold?.fx_rate_micro ?? null,
    },
    timeline,
    output: completed ? await s.views.output(job) : null,
    outputs,
    webhook: record.webhook,
    usage: "usage" in record ? ((record.usage as RequestDetail["usage"]) ?? null) : null,
  };
}
