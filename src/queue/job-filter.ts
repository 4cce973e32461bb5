import type { Dialect } from "../db/sql.ts";

/**
 * The WHERE clause of an account's jobs under the console's and the API's list filters, written once
 * for the pages of jobs (JobStore.list) and the figures over them (JobStatsStore): the same rows are
 * listed and counted. Scoped to one account (null: every account, the operator's list); the id range
 * comes first so the walk is a range of the (account_id, id) index (or (key_id, id) when filtered by
 * key, or the primary key across accounts), whatever the other filters.
 */
export interface JobFilter {
  /** null: every account (the operator's Requests page). */
  accountId: string | null;
  /** Ids after this one (exclusive), for oldest-first pages. */
  after?: string | null;
  /** Ids before this one (exclusive): the previous page's last id, or a period's end. */
  before?: string | null;
  /** Ids from this one on (inclusive): a period's start (uuidV7Floor). */
  since?: string | null;
  /** Exact creation bounds, epoch ms: from included, until excluded (a period to the millisecond). */
  createdFrom?: number | null;
  createdUntil?: number | null;
  status?: string;
  modelId?: string;
  keyId?: string;
  source?: "API" | "STUDIO";
  /** Only jobs of these kinds (the OpenAI videos door: video and avatar). */
  kinds?: readonly string[];
}

export function jobFilterSql(f: JobFilter): { where: string; args: (string | number)[] } {
  // Ids are UUIDv7 text: "" sorts before every id, "~" after. One lower and one upper bound on id,
  // so the index walk is exactly that range: with `id > ''` and `id >= ?` both written, SQLite took
  // the first as the range's start and walked the account's whole history before the period (83 ms
  // for a day of 1,000 jobs in 200 days of them; 1 ms with the one bound).
  const since = f.since && !(f.after && f.after >= f.since) ? f.since : null;
  const where = [since ? "id >= ?" : "id > ?", "id < ?"];
  const args: (string | number)[] = [since ?? f.after ?? "", f.before ?? "~"];
  if (f.accountId !== null) {
    where.unshift("account_id = ?");
    args.unshift(f.accountId);
  }
  const add = (clause: string, value: string | number | null | undefined) => {
    if (value === undefined || value === null || value === "") return;
    where.push(clause);
    args.push(value);
  };
  add("created_at >= ?", f.createdFrom);
  add("created_at < ?", f.createdUntil);
  if (f.kinds && f.kinds.length > 0) {
    where.push(`kind IN (${f.kinds.map(() => "?").join(", ")})`);
    args.push(...f.kinds);
  }
  add("status = ?", f.status);
  add("model_id = ?", f.modelId);
  add("key_id = ?", f.keyId);
  add("source = ?", f.source);
  return { where: where.join(" AND "), args };
}

/**
 * The index a page of jobs must walk where SQLite would choose wrong: it has no statistics here (no
 * ANALYZE), both model indexes look alike to it, and it took jobs_by_model (every account's jobs of
 * the model) for one account's page of a model. Named, so the page walks jobs_account_model.
 */
export function jobListIndexHint(dialect: Dialect, f: JobFilter): string {
  return dialect === "sqlite" && f.accountId !== null && f.modelId && !f.keyId
    ? " INDEXED BY jobs_account_model"
    : "";
}
