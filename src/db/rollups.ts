import type { Sql } from "./sql.ts";

/**
 * A rollup table kept as a running sum (usage_daily by Ledger.settle, job_stats_daily by
 * JobStatsStore.count): how two deltas of one row add up, and how one row's delta is written (an
 * upsert that adds it to the row). Only the figures read these rows, never the money path, so no
 * statement of a transaction needs them before its COMMIT.
 */
export interface Rollup<D> {
  /** Adds `more` into `into` (two deltas of the same row). */
  add(into: D, more: D): void;
  /** Writes one row's delta on `sql`. */
  write(sql: Sql, delta: D): Promise<unknown>;
}

/**
 * Adds `delta` to a rollup's row `row` (a key naming the row, e.g. its primary key's values joined).
 * Inside a transaction that folds its rollups (`sql.rollups`: a SQLite group commit's, see
 * GroupCommit) the delta is buffered and the row written once, just before the COMMIT; anywhere
 * else (PostgreSQL, a store's own transaction, no transaction) it is written at once.
 * `write` is called before this function awaits anything, so on PostgreSQL the upsert keeps its
 * place among the statements the caller pipelines beside it.
 */
export async function addToRollup<D>(sql: Sql, rollup: Rollup<D>, row: string, delta: D): Promise<void> {
  const folded = sql.rollups;
  if (folded) folded.add(rollup as Rollup<unknown>, row, delta);
  else await rollup.write(sql, delta);
}

/**
 * The rollup deltas of one transaction or savepoint, summed per row. A savepoint has its own,
 * merged into its parent's when it is released and dropped when it rolls back, so a group-committed
 * item that throws contributes nothing; the outermost transaction writes them before its COMMIT.
 * Why: a group commit of 16 chat settlements, usually of the same account, day, key and model, wrote
 * 16 upserts of the same usage_daily row (8.3 us each) and 16 of the same job_stats_daily row
 * (13.3 us each, its JSON histogram re-serialised every time): about 22 us of a call's 230-250 us
 * (docs/performance.md "Issue 36: folded rollups").
 */
export class Rollups {
  #rows: Map<Rollup<unknown>, Map<string, unknown>> | null = null;

  add(rollup: Rollup<unknown>, row: string, delta: unknown): void {
    this.#rows ??= new Map();
    let rows = this.#rows.get(rollup);
    if (!rows) {
      rows = new Map();
      this.#rows.set(rollup, rows);
    }
    const sum = rows.get(row);
    if (sum === undefined) rows.set(row, delta);
    else rollup.add(sum, delta);
  }

  /** A released savepoint's deltas, added to this (its parent's). */
  absorb(child: Rollups): void {
    if (!child.#rows) return;
    for (const [rollup, rows] of child.#rows) for (const [row, delta] of rows) this.add(rollup, row, delta);
  }

  /** Writes one upsert per row, then forgets them. */
  async write(sql: Sql): Promise<void> {
    const all = this.#rows;
    this.#rows = null;
    if (!all) return;
    for (const [rollup, rows] of all) for (const delta of rows.values()) await rollup.write(sql, delta);
  }
}
