import { SqlStore } from "../db/store.ts";
import { type JobFilter, jobFilterSql } from "./job-filter.ts";

/** An account's requests under a filter, counted; durations in ms (null: nothing finished). */
export interface JobStats {
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Still IN_QUEUE or IN_PROGRESS. */
  open: number;
  /** Nearest-rank percentiles of completed_at - created_at over COMPLETED and FAILED jobs. */
  p50_ms: number | null;
  p95_ms: number | null;
}

/**
 * The read side of `jobs` for the console's figures over a list's filter (src/queue/requests.ts):
 * counts by status and latency percentiles, computed by the database over the filter's rows
 * (never read into the process). Both queries walk the same index range as the list
 * (jobFilterSql: (account_id, id), or (key_id, id)), so their cost is the period's jobs, not the
 * account's history; the caller bounds the period (requests.ts, STATS_MAX_DAYS).
 */
export class JobStatsStore extends SqlStore {
  async stats(f: JobFilter): Promise<JobStats> {
    const { where, args } = jobFilterSql(f);
    type Counts = { total: bigint; completed: bigint; failed: bigint; cancelled: bigint };
    const counts = await this.q<Counts, (string | number)[]>(
      `SELECT count(*) AS total,
              count(*) FILTER (WHERE status = 'COMPLETED') AS completed,
              count(*) FILTER (WHERE status = 'FAILED') AS failed,
              count(*) FILTER (WHERE status = 'CANCELLED') AS cancelled
         FROM jobs WHERE ${where}`,
    ).get(...args);
    // Nearest rank: the p-th percentile of n sorted values is the ceil(p * n / 100)-th, written
    // (p * n + 99) / 100 in integer arithmetic, the same in SQLite and PostgreSQL. One sort of the
    // period's finished jobs, in the database; only the (at most two) chosen rows come back.
    type Ranked = { ms: bigint; rn: bigint; n: bigint };
    const ranked = await this.q<Ranked, (string | number)[]>(
      `SELECT ms, rn, n FROM (
           SELECT completed_at - created_at AS ms,
                  ROW_NUMBER() OVER (ORDER BY completed_at - created_at) AS rn,
                  COUNT(*) OVER () AS n
             FROM jobs WHERE ${where} AND status IN ('COMPLETED', 'FAILED')) ranked
         WHERE rn = (n * 50 + 99) / 100 OR rn = (n * 95 + 99) / 100
         ORDER BY rn`,
    ).all(...args);
    const at = (p: bigint): number | null => {
      const row = ranked.find((r) => BigInt(r.rn) === (BigInt(r.n) * p + 99n) / 100n);
      return row ? Number(row.ms) : null;
    };
    const n = (v: bigint | undefined) => Number(v ?? 0n);
    const total = n(counts?.total);
    const completed = n(counts?.completed);
    const failed = n(counts?.failed);
    const cancelled = n(counts?.cancelled);
    return {
      total,
      completed,
      failed,
      cancelled,
      open: total - completed - failed - cancelled,
      p50_ms: at(50n),
      p95_ms: at(95n),
    };
  }
}
