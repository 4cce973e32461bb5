import type { AccountStore, Currency } from "../accounts/store.ts";
import type { JobOutputStore } from "../files/job-output-store.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { ID_PATTERN, UUID_PATTERN } from "../lib/ids.ts";
import type { QueueServices } from "../server/context.ts";
import type { JobLogStore } from "./job-log-store.ts";
import type { JobRow, JobStatus } from "./job-row.ts";
import type { JobStore } from "./job-store.ts";

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

export const JOB_STATUSES: readonly JobStatus[] = [
  "IN_QUEUE",
  "IN_PROGRESS",
  "COMPLETED",
  "FAILED",
  "CANCELLED",
];

export interface RequestFilters {
  /** 1..100, default 50. */
  limit?: number;
  /** next_cursor of the previous page. */
  cursor?: string | null;
  keyId?: string | null;
  modelId?: string | null;
  status?: string | null;
  source?: string | null;
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

export interface RequestSummary {
  id: string;
  created_at: string;
  completed_at: string | null;
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

function bad(param: string, message: string): never {
  throw new DomainError("validation_error", message, { param });
}

async function priceOf(s: Pick<RequestStores, "ledger">, job: JobRow): Promise<RequestPrice> {
  const hold = await s.ledger.getHold(job.hold_id);
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
): Promise<RequestPage> {
  const limit = checkRequestFilters(f);

  const rows = await s.jobs.list(accountId, {
    limit: limit + 1,
    before: f.cursor || null,
    status: f.status || undefined,
    modelId: f.modelId || undefined,
    keyId: f.keyId || undefined,
    source: (f.source || undefined) as "API" | "STUDIO" | undefined,
  });
  const page = rows.slice(0, limit);
  const names = new Map((await s.accounts.listKeys(accountId)).map((k) => [k.id, k.name]));
  return {
    items: await Promise.all(
      page.map(
        async (job) => await summaryOf(s, job, job.key_id === null ? null : (names.get(job.key_id) ?? null)),
      ),
    ),
    next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}

/** A job as a row of a requests list (the account's, and the operator's across accounts). */
export async function summaryOf(
  s: Pick<RequestStores, "ledger">,
  job: JobRow,
  keyName: string | null,
): Promise<RequestSummary> {
  return {
    id: job.id,
    created_at: iso(job.created_at)!,
    completed_at: iso(job.completed_at),
    status: job.status,
    model_id: job.model_id,
    kind: job.kind,
    source: job.source,
    key_id: job.key_id,
    key_name: keyName,
    error_code: job.error_code,
    price: await priceOf(s, job),
  };
}

/** The filters' bounds (the account's list and the operator's): bad values are 400; the page size. */
export function checkRequestFilters(f: RequestFilters): number {
  const limit = f.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    bad("limit", "limit must be an integer from 1 to 100.");
  if (f.cursor && !UUID_PATTERN.test(f.cursor))
    bad("cursor", "cursor must be the next_cursor of a previous page.");
  if (f.keyId && !(ID_PATTERN.test(f.keyId) && f.keyId.startsWith("key_")))
    bad("key_id", "key_id must be a key id.");
  if (f.modelId && f.modelId.length > 200) bad("model_id", "model_id is too long.");
  if (f.status && !(JOB_STATUSES as readonly string[]).includes(f.status))
    bad("status", `status must be one of ${JOB_STATUSES.join(", ")}.`);
  if (f.source && f.source !== "API" && f.source !== "STUDIO") bad("source", "source must be API or STUDIO.");
  return limit;
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
  started_at: string | null;
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
    started_at: iso(job.started_at),
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
