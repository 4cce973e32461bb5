import { addToRollup, type Rollup } from "../db/rollups.ts";
import type { Dialect, Sql } from "../db/sql.ts";
import { SqlStore, Stmt } from "../db/store.ts";
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
 * [2^((b-1)/8), 2^(b/8)) ms, 9 % wide (2^(1/8) = 1.0905): an exact p95 of 20 s is shown as 21.2 s
 * (bucket 115's bound). Latencies of 1 ms to 1 hour span at most 175 buckets. Migration 028
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
 * to its final state (JobStore.toFinal calls `count`), in its row of account, UTC day of its
 * creation, key, model, source and status: n + 1, and + 1 in its latency bucket (a JSON object in
 * the row, so a period reads a row per day and combination, not one per bucket); a SQLite group
 * commit's jobs of one row are summed and written once (src/db/rollups.ts). Open jobs are
 * counted live from the partial index jobs_open_account (bounded by the in-flight caps), in the same
 * statement as the rollup so both come from one snapshot: a job that ends between two reads is never
 * counted twice or missed.
 */
export class JobStatsStore extends SqlStore {
  /** Counts a job that just reached its final state: call inside that transaction. */
  async count(job: JobRow): Promise<void> {
    const created = Number(job.created_at);
    const bucket = String(latencyBucket(Number(job.completed_at ?? job.created_at) - created));
    const key = [
      job.account_id,
      Math.floor(created / DAY_MS),
      job.key_id ?? "",
      job.model_id,
      job.source,
      job.status,
    ] as const;
    await addToRollup(this.sql, STATS_ROLLUP, key.join("|"), { key, latency: new Map([[bucket, 1]]) });
  }

  async stats(f: JobStatsFilter): Promise<JobStats> {
    const { text, params } = jobStatsSql(f);
    type Row = { status: string; n: bigint | number | string; latency: string | null };
    const rows = await this.q<Row, (string | number)[]>(text).all(...params);
    return figures(
      rows.map((r) => ({
        status: r.status,
        n: Number(r.n),
        latency: r.latency === null ? null : (JSON.parse(r.latency) as Histogram),
      })),
    );
  }
}

/** A latency histogram: bucket (as text) -> count. */
export type Histogram = Record<string, number>;

/**
 * A job_stats_daily row's delta: its key (account, day, key, model, source, status) and the jobs
 * to add, per latency bucket (their sum is the row's n: one bucket per job).
 */
interface StatsDelta {
  key: readonly [string, number, string, string, string, string];
  latency: Map<string, number>;
}

/** job_stats_daily as a folded rollup (src/db/rollups.ts): a group commit's jobs of a row, summed. */
const STATS_ROLLUP: Rollup<StatsDelta> = {
  add: (into, more) => {
    for (const [bucket, n] of more.latency) into.latency.set(bucket, (into.latency.get(bucket) ?? 0) + n);
  },
  write: async (sql, d) => await writeStats(sql, d),
};

/**
 * Buckets per upsert: a folded row may hold many (a group commit's jobs of one row, 9 % wide
 * buckets), and SQLite allows 127 arguments per function call (json_set, json_object).
 */
const BUCKETS_PER_UPSERT = 32;

/** One row's delta written: an upsert per 32 buckets, each adding its jobs to n and the histogram. */
async function writeStats(sql: Sql, d: StatsDelta): Promise<void> {
  const buckets = [...d.latency];
  for (let i = 0; i < buckets.length; i += BUCKETS_PER_UPSERT) {
    const part = buckets.slice(i, i + BUCKETS_PER_UPSERT);
    let n = 0;
    const params: (string | number)[] = [...d.key, 0];
    for (const [bucket, count] of part) {
      n += count;
      params.push(bucket, count);
    }
    params[6] = n;
    await countStmt(sql, part.length).run(...params);
  }
}

/**
 * The upsert of `k` buckets on `sql`, its text built once per dialect and k. Parameters: the row's
 * key (6), n, then each bucket as text and its count.
 */
function countStmt(sql: Sql, k: number): Stmt<null, (string | number)[]> {
  const cache = COUNT_STMTS[sql.dialect];
  const stmt = cache[k];
  if (stmt) return stmt.sql === sql ? stmt : stmt.on(sql);
  cache[k] = new Stmt(sql, countSql(sql.dialect, k));
  return cache[k];
}

const COUNT_STMTS: Record<Dialect, Stmt<null, (string | number)[]>[]> = { sqlite: [], postgres: [] };

function countSql(dialect: Dialect, k: number): string {
  const bucket = (i: number) => `?${8 + 2 * i}`;
  const count = (i: number) => `?${9 + 2 * i}`;
  const range = Array.from({ length: k }, (_, i) => i);
  const head = `INSERT INTO job_stats_daily (account_id, day, key_id, model_id, source, status, n, latency)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, `;
  const conflict = `ON CONFLICT (account_id, day, key_id, model_id, source, status) DO UPDATE SET n = job_stats_daily.n + excluded.n,
           latency = `;
  return dialect === "postgres"
    ? `${head}CAST(jsonb_build_object(${range.map((i) => `CAST(${bucket(i)} AS TEXT), CAST(${count(i)} AS BIGINT)`).join(", ")}) AS TEXT))
         ${conflict}CAST(CAST(job_stats_daily.latency AS jsonb) || jsonb_build_object(${range
           .map(
             (i) => `CAST(${bucket(i)} AS TEXT),
             coalesce(CAST(CAST(job_stats_daily.latency AS jsonb) ->> CAST(${bucket(i)} AS TEXT) AS BIGINT), 0) + CAST(${count(i)} AS BIGINT)`,
           )
           .join(", ")}) AS TEXT)`
    : // SQLite's json_set takes a path: '$."<bucket>"', built in SQL from the bucket.
      `${head}json_object(${range.map((i) => `${bucket(i)}, ${count(i)}`).join(", ")}))
         ${conflict}json_set(job_stats_daily.latency, ${range
           .map(
             (i) =>
               `'$."' || ${bucket(i)} || '"', coalesce(json_extract(job_stats_daily.latency, '$."' || ${bucket(i)} || '"'), 0) + ${count(i)}`,
           )
           .join(", ")})`;
}

/**
 * The figures' one statement: the period's rollup rows (a range of its primary key, account_id
 * then day) and the period's open jobs (jobs_open_account) counted as one row, status "open".
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
    parts.push(`SELECT status, n, latency FROM job_stats_daily
       WHERE account_id = ? AND day >= ? AND day < ? ${and}`);
    params.push(f.accountId, f.fromDay, f.untilDay, ...args);
  }
  if (!f.status || !FINAL.has(f.status)) {
    // One count, not one per status: the figures keep only the open total, and without the status
    // column SQLite counts the partial index's entries without reading a row of jobs (10,000 open
    // jobs: 0.85 ms, against 13.8 ms grouped by status; docs/performance.md "Issue 36: pages at
    // lower priority").
    parts.push(`SELECT 'open' AS status, count(*) AS n, NULL AS latency FROM jobs
       WHERE account_id = ? AND ${OPEN} AND created_at >= ? AND created_at < ? ${and}`);
    params.push(f.accountId, f.fromDay * DAY_MS, f.untilDay * DAY_MS, ...args);
  }
  return { text: parts.join(" UNION ALL "), params };
}

/** Counts by status and nearest-rank percentiles from the rows' histograms (null: open jobs). */
export function figures(rows: { status: string; n: number; latency: Histogram | null }[]): JobStats {
  const by: Record<string, number> = { COMPLETED: 0, FAILED: 0, CANCELLED: 0 };
  let total = 0;
  let n = 0;
  // counts[bucket]: buckets are small integers (1 hour is bucket 175), so an array in bucket order.
  const counts: number[] = [];
  for (const r of rows) {
    total += r.n;
    by[r.status] = (by[r.status] ?? 0) + r.n;
    if ((r.status !== "COMPLETED" && r.status !== "FAILED") || !r.latency) continue;
    for (const b in r.latency) {
      const i = Number(b);
      counts[i] = (counts[i] ?? 0) + r.latency[b]!;
      n += r.latency[b]!;
    }
  }
  // Nearest rank: the p-th percentile of n sorted values is the ceil(p * n / 100)-th; its bucket is
  // the first whose running count reaches that rank.
  const at = (p: number): number | null => {
    if (n === 0) return null;
    const rank = Math.ceil((p * n) / 100);
    let seen = 0;
    for (let b = 0; b < counts.length; b++) {
      seen += counts[b] ?? 0;
      if (seen >= rank) return bucketBound(b);
    }
    return null;
  };
  return {
    total,
    completed: by.COMPLETED!,
    failed: by.FAILED!,
    cancelled: by.CANCELLED!,
    open: total - by.COMPLETED! - by.FAILED! - by.CANCELLED!,
    p50_ms: at(50),
    p95_ms: at(95),
  };
}
