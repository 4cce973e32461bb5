import { SqlStore } from "../db/store.ts";
import { nextTurn } from "../lib/next-turn.ts";

/** Rows examined per transaction, as the request retention's batches (PURGE_BATCH). */
export const LEDGER_PURGE_BATCH = 500;

/** What one run deleted. */
export interface LedgerPurged {
  entries: number;
  holds: number;
}

/**
 * The retention of money history ([retention] ledger_days, docs/operations.md "Retention"): off by
 * default, since the ledger is what a dispute or an audit is settled on. When set, ledger entries
 * dated before the cutoff are deleted oldest first, and so are resolved holds that nothing points
 * at any more (no job record, no kept entry). What stays is, for every account, the newest part of
 * its entries in id order (a suffix), and each account's newest entry always: every kept entry
 * carries its running figures, so the figures the deleted ones summed to are the first kept entry's
 * `balance_after - balance_delta` (and the same for held), and `opening + sum(deltas) = balance`
 * still holds (docs/money.md "Retention"; checked by `gengate migrate-data`'s verification). Open
 * holds, balances and the rollups (usage_daily, key_spend) are never touched.
 */
export class LedgerRetentionStore extends SqlStore {
  private get bytewise(): string {
    return this.sql.dialect === "postgres" ? ' COLLATE "C"' : "";
  }

  protected override s = {
    // The oldest entries in id order (the primary key), with whether each is its account's newest
    // (ledger_entries_account: one index probe per row).
    entries: this.q<{ id: bigint; created_at: bigint; newest: bigint | boolean }, [bigint, number]>(
      `SELECT e.id, e.created_at,
         CASE WHEN e.id = (SELECT max(x.id) FROM ledger_entries x WHERE x.account_id = e.account_id) THEN 1 ELSE 0 END AS newest
       FROM ledger_entries e WHERE e.id > ? ORDER BY e.id LIMIT ?`,
    ),
    // A range of ids read in this transaction, all dated before the cutoff; an account's newest
    // entry is kept (checked again here: an entry written since the read is newer).
    deleteEntries: this.q<null, [bigint, bigint]>(
      `DELETE FROM ledger_entries WHERE id > ?1 AND id <= ?2
         AND id < (SELECT max(x.id) FROM ledger_entries x WHERE x.account_id = ledger_entries.account_id)`,
    ),
    // Holds in id order, compared byte by byte (time-ordered ids: creation order; PostgreSQL's
    // default collation would not sort mixed-case base62 so).
    holds: this.q<{ id: string; created_at: bigint }, [string, number]>(
      `SELECT id, created_at FROM holds WHERE id${this.bytewise} > ? ORDER BY id${this.bytewise} LIMIT ?`,
    ),
    // Resolved before the cutoff, and nothing points at it: its job's record went with the request
    // retention (jobs.hold_id is a foreign key) and its entries with this one.
    deleteHolds: this.q<null, [string, string, number]>(
      `DELETE FROM holds WHERE id${this.bytewise} > ?1 AND id${this.bytewise} <= ?2 AND status <> 'open' AND resolved_at < ?3
         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.hold_id = holds.id)
         AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.hold_id = holds.id)`,
    ),
  };

  /**
   * One batch of entries after id `after`: deletes those dated before `cutoff` (epoch seconds) up to
   * the first that is not. Returns how many went, the last id examined, and whether the scan is done.
   */
  async entriesBatch(cutoff: number, after: bigint, limit = LEDGER_PURGE_BATCH) {
    return await this.atomic(async (self) => {
      const rows = await self.s.entries.all(after, limit);
      let upto = after;
      let done = rows.length < limit;
      for (const r of rows) {
        if (Number(r.created_at) >= cutoff) {
          done = true;
          break;
        }
        upto = r.id;
      }
      const deleted = upto > after ? (await self.s.deleteEntries.run(after, upto)).changes : 0;
      return { deleted, last: upto, done };
    });
  }

  /**
   * One batch of holds after id `after` (their ids are time-ordered, older ones may not be): the
   * resolved ones before `cutoff` that nothing points at are deleted. The scan is done at the first
   * batch with no hold created before the cutoff.
   */
  async holdsBatch(cutoff: number, after: string, limit = LEDGER_PURGE_BATCH) {
    return await this.atomic(async (self) => {
      const rows = await self.s.holds.all(after, limit);
      const last = rows.at(-1)?.id ?? after;
      const done = rows.length < limit || rows.every((r) => Number(r.created_at) >= cutoff);
      const deleted = rows.length > 0 ? (await self.s.deleteHolds.run(after, last, cutoff)).changes : 0;
      return { deleted, last, done };
    });
  }

  /**
   * Deletes the money history dated before `cutoff` (epoch seconds): entries first (so their holds
   * are free to go), then holds, batch after batch with a turn of the event loop between; stops
   * early when `signal` aborts (leadership lost; the next run starts over, from the oldest).
   * `limit`: rows examined per batch (tests use small ones to cross batch edges).
   */
  async purge(cutoff: number, signal?: AbortSignal, limit = LEDGER_PURGE_BATCH): Promise<LedgerPurged> {
    const purged: LedgerPurged = { entries: 0, holds: 0 };
    for (let after = 0n; ; ) {
      const b = await this.entriesBatch(cutoff, after, limit);
      purged.entries += b.deleted;
      if (b.done || signal?.aborted) break;
      after = b.last;
      await nextTurn();
    }
    for (let after = ""; !signal?.aborted; ) {
      const b = await this.holdsBatch(cutoff, after, limit);
      purged.holds += b.deleted;
      if (b.done) break;
      after = b.last;
      await nextTurn();
    }
    return purged;
  }
}
