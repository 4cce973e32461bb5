import { errorFields, log } from "../lib/log.ts";

/**
 * Live queue positions without counting rows: per (provider, model), the sorted submit sequence
 * numbers of IN_QUEUE jobs, kept in memory and updated after each commit that moves a job into or
 * out of IN_QUEUE. On SQLite the server is the only writer of jobs, and the index is rebuilt from
 * the database at start, so it is exact. On PostgreSQL other instances queue and claim jobs too:
 * `LiveQueueIndex` re-reads it (at most once a second, only while positions are asked for). A
 * position is a binary search: O(log n) at any queue depth
 * (a SQL count was O(position), a fifth of the CPU under load with deep queues).
 */
export class QueueIndex {
  private readonly lanes = new Map<string, number[]>();

  constructor(rows: Iterable<{ provider: string; model_id: string; seq: bigint }> = []) {
    for (const r of rows) this.add(r);
  }

  add(job: { provider: string; model_id: string; seq: bigint }): void {
    const key = `${job.provider}\u0000${job.model_id}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = [];
      this.lanes.set(key, lane);
    }
    const seq = Number(job.seq);
    const at = lowerBound(lane, seq);
    if (lane[at] !== seq) lane.splice(at, 0, seq);
  }

  /** Replaces every lane with these rows (a fresh read of the queued jobs). */
  reset(rows: Iterable<{ provider: string; model_id: string; seq: bigint }>): void {
    this.lanes.clear();
    for (const r of rows) this.add(r);
  }

  remove(job: { provider: string; model_id: string; seq: bigint }): void {
    const lane = this.lanes.get(`${job.provider}\u0000${job.model_id}`);
    if (!lane) return;
    const seq = Number(job.seq);
    const at = lowerBound(lane, seq);
    if (lane[at] === seq) lane.splice(at, 1);
  }

  /** Jobs of the same lane queued before this one (0-based position). */
  position(job: { provider: string; model_id: string; seq: bigint }): number {
    const lane = this.lanes.get(`${job.provider}\u0000${job.model_id}`);
    return lane ? lowerBound(lane, Number(job.seq)) : 0;
  }
}

type QueuedRow = { provider: string; model_id: string; seq: bigint };

/** How old the queue index may get on PostgreSQL before a position read refreshes it. */
const INDEX_REFRESH_MS = 1000;

/**
 * The JobStore's queue index, shared by every view of the store: read once at start (`ready`),
 * kept by the store's transitions after each commit, and on PostgreSQL (`shared`: other instances
 * queue and claim too) re-read in the background when a position is asked for and the last read
 * is over INDEX_REFRESH_MS old, so a position is at most about a second stale.
 */
export class LiveQueueIndex extends QueueIndex {
  private at = 0;
  private reading = false;
  /** Resolves once the index was first read. */
  readonly ready: Promise<void>;

  /**
   * `read`: the queued jobs, through the root Sql (never a transaction's). `afterCommit`: runs a
   * function once any transaction the caller is inside has ended (the store passes src/db/sql.ts's),
   * so this module needs nothing of the database layer and a store may use it.
   */
  constructor(
    private readonly read: () => Promise<QueuedRow[]>,
    private readonly shared: boolean,
    private readonly afterCommit: (fn: () => void) => void,
  ) {
    super();
    this.ready = read().then((rows) => {
      for (const row of rows) this.add(row);
    });
  }

  override position(job: QueuedRow): number {
    if (this.shared) this.refreshSoon();
    return super.position(job);
  }

  private refreshSoon(): void {
    if (this.reading || Date.now() - this.at < INDEX_REFRESH_MS) return;
    this.reading = true;
    // Once any transaction this call is inside has ended.
    this.afterCommit(() => {
      void this.read()
        .then((rows) => {
          this.reset(rows);
          this.at = Date.now();
        })
        .catch((err) => log("warn", "queue index refresh failed", errorFields(err)))
        .finally(() => {
          this.reading = false;
        });
    });
  }
}

function lowerBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
