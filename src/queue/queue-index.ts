/**
 * Live queue positions without counting rows: per (provider, model), the sorted submit sequence
 * numbers of IN_QUEUE jobs, kept in memory and updated after each commit that moves a job into or
 * out of IN_QUEUE. On SQLite the server is the only writer of jobs, and the index is rebuilt from
 * the database at start, so it is exact. On PostgreSQL other instances queue and claim jobs too:
 * the JobStore re-reads it (at most once a second, only while positions are asked for). A position is a binary search: O(log n) at any queue depth
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
