import { type Committed, canCommitEarly, DURABLE_NOW, type Sql } from "./sql.ts";

interface Pending<T> {
  work: (tx: Sql) => Promise<T>;
  /** Resolved at the COMMIT with the batch's durability (runCommitted), or once durable (run). */
  early: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: work items that arrive in the same event-loop turn run in ONE transaction, each
 * inside its own savepoint (`tx.tx`), so one item failing (402, 409, ...) rolls back only itself.
 * Callers are answered after the shared COMMIT is durable (its WAL sync), so every answer still
 * follows its own durable write; `runCommitted` callers get the commit and its `durable` promise at
 * once, and await it before they answer. On SQLite, under load, this turns N commits (each writing
 * the same account, key and index pages to the WAL, and checkpointing often) into one; with one request in flight it adds no wait
 * (the batch is flushed on the next turn). On PostgreSQL each item is its own transaction: the
 * server groups concurrent commits itself, and one shared transaction would serialise the items
 * on one connection and hold every row lock of the batch until its end (docs/scale-out.md).
 * On SQLite the batch's rollup deltas (usage_daily, job_stats_daily) are summed per row and written
 * once per row just before the COMMIT; an item that rolls back adds nothing (src/db/rollups.ts).
 */
export class GroupCommit {
  private queue: Pending<unknown>[] = [];
  private scheduled = false;

  constructor(
    private readonly sql: Sql,
    private readonly maxBatch = 256,
  ) {}

  async run<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.sql.dialect === "postgres") return await this.sql.tx(work);
    return await new Promise<T>((resolve, reject) =>
      this.enqueue({ work, early: false, resolve: resolve as (v: unknown) => void, reject }),
    );
  }

  /**
   * `run`, resolved at the batch's COMMIT, before it is durable (SqliteSql.txCommitted): the caller
   * may start work that answers nobody (a chat's upstream call) while the WAL sync runs, and must
   * await `durable` before it answers anything that depends on the write. On PostgreSQL the
   * commit is durable when it returns.
   */
  async runCommitted<T>(work: (tx: Sql) => Promise<T>): Promise<Committed<T>> {
    if (this.sql.dialect === "postgres") return { value: await this.sql.tx(work), durable: DURABLE_NOW };
    return await new Promise<Committed<T>>((resolve, reject) =>
      this.enqueue({ work, early: true, resolve: resolve as (v: unknown) => void, reject }),
    );
  }

  private enqueue<T>(item: Pending<T>): void {
    this.queue.push(item as Pending<unknown>);
    if (this.queue.length >= this.maxBatch) void this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  /**
   * Work that opens its own transaction when given the root (a store's `atomic` method): on SQLite
   * it joins the next batch (its transaction becomes a savepoint of the shared one), on PostgreSQL
   * it runs on the root Sql as it is, so it pays no extra savepoint round trips.
   */
  async batched<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.sql.dialect === "postgres") return await work(this.sql);
    return await this.run(work);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const body = async (tx: Sql) => {
      for (const item of batch) {
        try {
          // A savepoint: it rolls back alone if the item throws.
          outcomes.push({ ok: true, value: await tx.tx(item.work) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    };
    let durable: Promise<void>;
    try {
      // The batch's rollup upserts are folded: one per row, before the COMMIT (src/db/rollups.ts).
      if (canCommitEarly(this.sql))
        durable = (await this.sql.txCommitted(body, { foldRollups: true })).durable;
      else {
        await this.sql.tx(body);
        durable = DURABLE_NOW;
      }
    } catch (error) {
      // The COMMIT itself failed: nothing in the batch was written.
      for (const item of batch) item.reject(error);
      return;
    }
    const settle = (item: Pending<unknown>, i: number) => {
      const o = outcomes[i]!;
      if (!o.ok) item.reject(o.error);
      else item.resolve(item.early ? { value: o.value, durable } : o.value);
    };
    // Early items now (their callers await `durable` before answering); the rest once durable.
    batch.forEach((item, i) => {
      if (item.early) settle(item, i);
    });
    try {
      await durable;
    } catch (error) {
      // Committed but not synced (a disk error): nothing of it may be acknowledged.
      for (const item of batch) if (!item.early) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      if (!item.early) settle(item, i);
    });
  }
}
