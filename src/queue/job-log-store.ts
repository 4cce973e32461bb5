import { jsonList, SqlStore } from "../db/store.ts";
import type { LeaseFence } from "./job-row.ts";

/** A job's log line as stored. */
export interface JobLogRow {
  at: bigint;
  level: string;
  message: string;
}

/** Longest stored line, in characters; longer ones are cut. */
const MAX_LINE = 2000;
/** Lines kept per job: a chatty provider must not grow a job's logs without end. */
const MAX_LINES = 1000n;

/**
 * The `job_logs` table: a job's log lines, numbered per job (what providers and recovery say while
 * it runs; shown by status reads with logs and the console's timeline). A worker writes through a
 * `fenced` view, so a worker whose lease was taken over adds nothing.
 */
export class JobLogStore extends SqlStore {
  /** The lease this view's lines are fenced by (see `fenced`); null: unfenced. */
  private fence: LeaseFence | null = null;

  /** This store with every line fenced by a worker's lease (as `JobStore.fenced` fences its writes). */
  fenced(owner: string, attempt: bigint): this {
    const view = this.variant();
    view.fence = { owner, attempt };
    return view;
  }

  protected override s = {
    count: this.q<{ n: bigint }, [string]>("SELECT count(*) AS n FROM job_logs WHERE job_id = ?"),
    // ON CONFLICT: two writers of one job's log (a worker and recovery, a cancel) may count the same
    // line number; the loser counts again (append).
    insert: this.q(
      "INSERT INTO job_logs (job_id, n, at, level, message) VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_id, n) DO NOTHING",
    ),
    // A worker's log line, fenced like its other writes: nothing once its lease was taken over.
    insertFenced: this.q<null, [string, bigint, number, string, string, string, bigint]>(
      `INSERT INTO job_logs (job_id, n, at, level, message)
         SELECT CAST(?1 AS TEXT), CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), CAST(?4 AS TEXT), CAST(?5 AS TEXT)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND status = 'IN_PROGRESS' AND lease_owner = ?6 AND attempt = ?7)
         ON CONFLICT (job_id, n) DO NOTHING`,
    ),
    list: this.q<JobLogRow, [string]>("SELECT at, level, message FROM job_logs WHERE job_id = ? ORDER BY n"),
    // Through the primary key (job_id, n): the lines of the listed jobs only.
    deleteForJobs: this.q<null, [string]>(`DELETE FROM job_logs WHERE job_id IN (${jsonList(this.sql)})`),
  };

  /**
   * One log line, numbered after the job's last. Line numbers are counted, then inserted: when
   * another writer of the same job took the number meanwhile (a worker and start-up recovery, or a
   * cancel), the insert does nothing and the line is counted again. A fenced writer whose lease was
   * taken over writes nothing.
   */
  async append(id: string, level: string, message: string, now: number): Promise<void> {
    const text = message.slice(0, MAX_LINE);
    for (let tries = 0; tries < 8; tries++) {
      const n = (await this.s.count.get(id))!.n;
      if (n >= MAX_LINES) return;
      const { changes } = this.fence
        ? await this.s.insertFenced.run(id, n, now, level, text, this.fence.owner, this.fence.attempt)
        : await this.s.insert.run(id, n, now, level, text);
      if (changes > 0) return;
      // Fenced and nothing written: the lease is gone, unless a rival took the number.
      if (this.fence && (await this.s.count.get(id))!.n === n) return;
    }
  }

  /** Deletes the lines of the jobs in `idsJson` (a JSON array of ids: the retention purge). */
  async deleteForJobs(idsJson: string): Promise<number> {
    return (await this.s.deleteForJobs.run(idsJson)).changes;
  }

  /** A job's lines in order. */
  async list(id: string): Promise<JobLogRow[]> {
    return await this.s.list.all(id);
  }
}
