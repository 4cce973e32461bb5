import { DomainError } from "../lib/errors.ts";
import { ID_PATTERN, UUID_PATTERN, uuidV7Floor } from "../lib/ids.ts";
import type { JobFilter } from "./job-filter.ts";
import type { JobStatus } from "./job-row.ts";

/**
 * The console's filters of an account's requests (key, model, status, source, a date range), read
 * and checked once for the list (listRequests) and its figures (requestStats): a value out of its
 * bounds is 400 validation_error naming it, never ignored.
 */
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
  /** First day, "YYYY-MM-DD" (UTC), included. */
  from?: string | null;
  /** Last day, "YYYY-MM-DD" (UTC), included. */
  to?: string | null;
}

const DAY_MS = 86_400_000;
/** A day the date inputs may carry: 2000-01-01 to 2999-12-31 (bounded, so the ms stay exact). */
const DAY = /^(2\d{3})-(\d{2})-(\d{2})$/;

export function bad(param: string, message: string): never {
  throw new DomainError("validation_error", message, { param });
}

/** "YYYY-MM-DD" -> that day's 00:00:00.000 UTC (epoch ms); a day that does not exist is 400. */
export function dayStart(text: string, param: string): number {
  const m = DAY.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== text)
    bad(param, `${param} must be a date, YYYY-MM-DD (UTC).`);
  return ms;
}

/** A date range's instants: from `from`'s start (included) to the end of `to` (excluded); nulls when open. */
export interface Period {
  startMs: number | null;
  endMs: number | null;
}

export function periodOf(f: Pick<RequestFilters, "from" | "to">): Period {
  const startMs = f.from ? dayStart(f.from, "from") : null;
  const endMs = f.to ? dayStart(f.to, "to") + DAY_MS : null;
  if (startMs !== null && endMs !== null && startMs >= endMs) bad("to", "To must be on or after From.");
  return { startMs, endMs };
}

/**
 * A period as a JobFilter's bounds: exact on created_at, and the id range around it (UUIDv7 ids carry
 * their creation time; the job's id is made within a millisecond of its created_at, so a second's
 * margin either side keeps every job of the period inside the range), which the index walks.
 */
export function periodBounds(
  p: Period,
): Pick<JobFilter, "since" | "before" | "createdFrom" | "createdUntil"> {
  return {
    since: p.startMs === null ? null : uuidV7Floor(p.startMs - 1000),
    before: p.endMs === null ? null : uuidV7Floor(p.endMs + 1000),
    createdFrom: p.startMs,
    createdUntil: p.endMs,
  };
}

/** The filters (all but paging and dates) checked, as JobFilter fields. */
export function checkedFilters(
  f: RequestFilters,
): Pick<JobFilter, "status" | "modelId" | "keyId" | "source"> {
  if (f.keyId && !(ID_PATTERN.test(f.keyId) && f.keyId.startsWith("key_")))
    bad("key_id", "key_id must be a key id.");
  if (f.modelId && f.modelId.length > 200) bad("model_id", "model_id is too long.");
  // A control character is in no model id, and PostgreSQL refuses a NUL in any text parameter: a 500
  // there (found by the OpenAPI fuzz on PostgreSQL: GET /v1/requests?model_id=%00), an empty page here.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
  if (f.modelId && /[\u0000-\u001f\u007f]/.test(f.modelId)) bad("model_id", "model_id must be a model id.");
  if (f.status && !(JOB_STATUSES as readonly string[]).includes(f.status))
    bad("status", `status must be one of ${JOB_STATUSES.join(", ")}.`);
  if (f.source && f.source !== "API" && f.source !== "STUDIO") bad("source", "source must be API or STUDIO.");
  return {
    status: f.status || undefined,
    modelId: f.modelId || undefined,
    keyId: f.keyId || undefined,
    source: (f.source || undefined) as "API" | "STUDIO" | undefined,
  };
}

/** A request id typed into the filter: a UUID (400 otherwise). */
export function checkedRequestId(id: string): string {
  const v = id.trim().toLowerCase();
  if (!UUID_PATTERN.test(v))
    bad("request_id", "A request id is a UUID, like 019b76da-a800-714a-8bb6-f164ad7f2bce.");
  return v;
}

/** The earlier of two exclusive upper id bounds (null: none). */
export function earlierBound(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a < b ? a : b;
}

/** A page's size: 1..100, default 50 (400 otherwise). */
export function checkedLimit(limit: number | undefined): number {
  const v = limit ?? 50;
  if (!Number.isInteger(v) || v < 1 || v > 100) bad("limit", "limit must be an integer from 1 to 100.");
  return v;
}

/** The cursor, checked: the next_cursor of a previous page (a request id). */
export function checkedCursor(cursor: string | null | undefined): string | null {
  if (cursor && !UUID_PATTERN.test(cursor))
    bad("cursor", "cursor must be the next_cursor of a previous page.");
  return cursor || null;
}
