import type { Sql } from "../db/sql.ts";
import { jsonList, SqlStore } from "../db/store.ts";
import { nextTurn } from "../lib/next-turn.ts";
import type { UpstreamCallbackStore } from "../providers/callback-store.ts";
import type { WebhookOutbox } from "../webhooks/outbox.ts";
import type { JobLogStore } from "./job-log-store.ts";

/**
 * Jobs per transaction. Measured on SQLite (docs/performance.md "Issue 36: bytes per job and
 * retention"): a batch of 500 with their logs and deliveries took 5-17 ms (median), 38 ms at worst,
 * commit and sync included, under the 50 ms the event loop may stall; 1,000 took 66 ms.
 */
export const PURGE_BATCH = 500;

/**
 * One batch's jobs: finished before the cutoff, oldest first, through jobs_completed (migration
 * 026, a partial index on completed_at: the term `completed_at IS NOT NULL` is its own WHERE), so
 * a batch reads its 500 index entries, never the jobs still kept. Exported for the query-plan test.
 */
export const PURGE_SELECT_SQL = `SELECT id FROM jobs WHERE completed_at IS NOT NULL AND completed_at < ?
  ORDER BY completed_at LIMIT ?`;

/** The stores of the rows that hang off a job, each deleting its own (re-bound to the batch's transaction). */
export interface JobRetentionDeps {
  logs: JobLogStore;
  outbox: WebhookOutbox;
  callbacks: UpstreamCallbackStore;
}

/**
 * The retention of finished requests' records ([retention] requests_days, docs/operations.md
 * "Retention"): a job that ended before the cutoff is deleted with what hangs off it, its log lines,
 * webhook deliveries and upstream callback, each through the store that owns the table, in one
 * transaction per batch. Money is never touched: the job's hold and ledger entries (the statement,
 * GET /v1/account/ledger) and the rollups stay. Its outputs' rows and bytes go with their own expiry
 * (`FileStore.sweep`); a purged job's output links already answer 404, as its record does.
 */
export class JobRetentionStore extends SqlStore {
  private deps: JobRetentionDeps;

  protected override s = {
    batch: this.q<{ id: string }, [number, number]>(PURGE_SELECT_SQL),
    // The ids were read in this transaction; `completed_at IS NOT NULL` keeps an open job out
    // whatever the list says.
    deleteJobs: this.q<null, [string]>(
      `DELETE FROM jobs WHERE id IN (${jsonList(this.sql)}) AND completed_at IS NOT NULL`,
    ),
  };

  constructor(sql: Sql, deps: JobRetentionDeps) {
    super(sql);
    this.deps = deps;
  }

  protected override bound(tx: Sql): void {
    this.deps = {
      logs: this.deps.logs.in(tx),
      outbox: this.deps.outbox.in(tx),
      callbacks: this.deps.callbacks.in(tx),
    };
  }

  /** One batch in one transaction: up to `limit` jobs that ended before `cutoffMs`; how many went. */
  async purgeBatch(cutoffMs: number, limit = PURGE_BATCH): Promise<number> {
    return await this.atomic(async (self) => {
      const ids = (await self.s.batch.all(cutoffMs, limit)).map((r) => r.id);
      if (ids.length === 0) return 0;
      const list = JSON.stringify(ids);
      await self.deps.logs.deleteForJobs(list);
      await self.deps.outbox.deleteForRequests(list);
      await self.deps.callbacks.deleteForJobs(list);
      return (await self.s.deleteJobs.run(list)).changes;
    });
  }

  /**
   * Deletes every job that ended before `cutoffMs`, batch after batch, giving the event loop a turn
   * between batches (requests are served in between); stops early when `signal` aborts (the
   * leadership was lost). Returns how many jobs went.
   */
  async purgeFinished(cutoffMs: number, signal?: AbortSignal): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.purgeBatch(cutoffMs);
      total += n;
      if (n < PURGE_BATCH || signal?.aborted) return total;
      await nextTurn();
    }
  }
}
