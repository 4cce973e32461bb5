import type { Sql } from "./sql.ts";

interface Pending<T> {
  work: (tx: Sql) => Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: work items that arrive in the same event-loop turn run in ONE transaction, each
 * inside its own savepoint (`tx.tx`), so one item failing (402, 409, ...) rolls back only itself.
 * Callers are answered after the shared COMMIT, so every answer still follows its own durable
 * write. On SQLite, under load, this turns N commits (each writing the same account, key and index
 * pages to the WAL, and checkpointing often) into one; with one request in flight it adds no wait
 * (the batch is flushed on the next turn). On PostgreSQL each item is its own transaction: the
 * server groups concurrent commits itself, and one shared transaction would serialise the items
 * on one connection and hold every row lock of the batch until its end (docs/scale-out.md).
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
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Pending<unknown>);
      if (this.queue.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
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
    try {
      await this.sql.tx(async (tx) => {
        for (const item of batch) {
          try {
            // A savepoint: it rolls back alone if the item throws.
            outcomes.push({ ok: true, value: await tx.tx(item.work) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The COMMIT itself failed: nothing in the batch was written.
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const o = outcomes[i]!;
      if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  }
}
