import { SqlStore } from "../db/store.ts";
import type { JobRow } from "./job-row.ts";

/** An account's requests under a filter, counted; durations in ms (null: nothing finished). */
export interface JobStats {
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Still IN_QUEUE or IN_PROGRESS. */
  open: number;
  /**
   * Nearest-rank percentiles of completed_at - created_at over COMPLETED and FAILED jobs, as the
   * upper bound of the latency bucket that holds the exact value (latencyBucket): never below it,
   * at most 9 % above it.
   */
  p50_ms: number | null;
  p95_ms: number | null;
}

/** The figures' filter: one account, whole UTC days, and the list's other filters. */
export interface JobStatsFilter {
  accountId: string;
  /** UTC days since the epoch (epoch ms / 86,400,000): first included, last excluded. */
  fromDay: number;
  untilDay: number;
  status?: string;
  modelId?: string;
  keyId?: string;
  source?: "API" | "STUDIO";
}

export const DAY_MS = 86_400_000;

/**
 * A latency's bucket: 0 under 1 ms, else floor(8 * log2(ms)) + 1, so bucket b >= 1 holds
 * [2^((b-1)/8), 2^(b/8)) ms, 9 % wide (2^(1/8) = 1.0905): a p95 of 20 s reads 20.5 s at most. At
 * 8 buckets per doubling a day of 1 ms to 1 hour latencies spans at most 175 buckets. Migration 028
 * computes the same in SQL for the backfill (log2 in SQLite, numeric log in PostgreSQL: exact at
 * powers of two, as Math.log2).
 */
export function latencyBucket(ms: number): number {
  return ms < 1 ? 0 : Math.floor(8 * Math.log2(ms)) + 1;
}

/** A bucket's upper bound in whole ms (0 for bucket 0): never below any latency in the bucket. */
export function bucketBound(bucket: number): number {
  return bucket === 0 ? 0 : Math.round(2 ** (bucket / 8));
}

const OPEN = "status IN ('IN_QUEUE', 'IN_PROGRESS')";
const FINAL = new Set(["COMPLETED", "FAILED", "CANCELLED"]);

/**
 * The Requests figures (src/queue/requests.ts) from the rollup job_stats_daily (migration 028),
 * never from a scan of the period's jobs: a job is counted once, in the transaction that moved it
 * to its final state (JobStore.toFinal calls `count`), per account, UTC day of its creation, key,
 * model, source, status and latency bucket. Open jobs are counted live from the partial index
 * jobs_open_account (bounded by the in-flight caps), in the same statement as the rollup so both
 * come from one snapshot: a job that ends between two reads is never counted twice or missed.
 */
export class JobStatsStore extends SqlStore {
  protected override s = {
    count: this.q<null, [string, number, string, string, string, string, number]>(
      `INSERT INTO job_stats_daily (account_id, day, key_id, model_id, source, status, bucket, n)
         VALUES (?, ?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT (account_id, day, key_id, model_id, source, status, bucket)
         DO UPDATE SET n = job_stats_daily.n + 1`,
    ),
  };

  /** Counts a job that just reached its final state: call inside that transaction. */
  async count(job: JobRow): Promise<void> {
    const created = Number(job.created_at);
    const ms = Number(job.completed_at ?? job.created_at) - created;
    await this.s.count.run(
      job.account_id,
      Math.floor(created / DAY_MS),
      job.key_id ?? "",
      job.model_id,
      job.source,
      job.status,
      latencyBucket(ms),
    );
  }

  async stats(f: JobStatsFilter): Promise<JobStats> {
    const { text, params } = jobStatsSql(f);
    type Row = { status: string; bucket: bigint | number; n: bigint | number | string };
    const rows = await this.q<Row, (string | number)[]>(text).all(...params);
    return figures(rows.map((r) => ({ status: r.status, bucket: Number(r.bucket), n: Number(r.n) })));
  }
}

/**
 * The figures' one statement: the period's rollup rows (a range of its primary key, account_id
 * then day) summed by status and bucket, and the period's open jobs (jobs_open_account) by status.
 */
export function jobStatsSql(f: JobStatsFilter): { text: string; params: (string | number)[] } {
  const filters: string[] = [];
  const args: (string | number)[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined || value === "") return;
    filters.push(`AND ${column} = ?`);
    args.push(value);
  };
  add("status", f.status);
  add("model_id", f.modelId);
  add("key_id", f.keyId);
  add("source", f.source);
  const and = filters.join(" ");
  const parts: string[] = [];
  const params: (string | number)[] = [];
  // A status filter reads only its side: the rollup holds final jobs, the index open ones.
  if (!f.status || FINAL.has(f.status)) {
    parts.push(`SELECT status, bucket, sum(n) AS n FROM job_stats_daily
       WHERE account_id = ? AND day >= ? AND day < ? ${and} GROUP BY status, bucket`);
    params.push(f.accountId, f.fromDay, f.untilDay, ...args);
  }
  if (!f.status || !FINAL.has(f.status)) {
    parts.push(`SELECT status, -1 AS bucket, count(*) AS n FROM jobs
       WHERE account_id = ? AND ${OPEN} AND created_at >= ? AND created_at < ? ${and} GROUP BY status`);
    params.push(f.accountId, f.fromDay * DAY_MS, f.untilDay * DAY_MS, ...args);
  }
  return { text: parts.join(" UNION ALL "), params };
}

/** Counts by status and nearest-rank percentiles from a histogram of (status, bucket, n). */
export function figures(rows: { status: string; bucket: number; n: number }[]): JobStats {
  const by = (s: string) => rows.reduce((sum, r) => sum + (r.status === s ? r.n : 0), 0);
  const total = rows.reduce((sum, r) => sum + r.n, 0);
  const finished = new Map<number, number>();
  for (const r of rows)
    if (r.status === "COMPLETED" || r.status === "FAILED")
      finished.set(r.bucket, (finished.get(r.bucket) ?? 0) + r.n);
  const buckets = [...finished.entries()].sort((a, b) => a[0] - b[0]);
  const n = buckets.reduce((sum, [, c]) => sum + c, 0);
  // Nearest rank: the p-th percentile of n sorted values is the ceil(p * n / 100)-th; its bucket is
  // the first whose running count reaches that rank.
  const at = (p: number): number | null => {
    if (n === 0) return null;
    const rank = Math.ceil((p * n) / 100);
    let seen = 0;
    for (const [bucket, c] of buckets) {
      seen += c;
      if (seen >= rank) return bucketBound(bucket);
    }
    return null;
  };
  const completed = by("COMPLETED");
  const failed = by("FAILED");
  const cancelled = by("CANCELLED");
  return {
    total,
    completed,
    failed,
    cancelled,
    open: total - completed - failed - cancelled,
    p50_ms: at(50),
    p95_ms: at(95),
  };
}
