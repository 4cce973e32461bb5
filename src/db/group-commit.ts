import type { Database } from "bun:sqlite";

interface Pending<T> {
  work: () => T;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: work items that arrive in the same event-loop turn run in ONE immediate
 * transaction, each inside its own savepoint, so one item failing (402, 409, ...) rolls back
 * only itself. Callers are answered after the shared COMMIT, so every answer still follows its
 * own durable write. Under load this turns N commits (each writing the same account, key and
 * index pages to the WAL, and checkpointing often) into one; with one request in flight it adds
 * no wait (the batch is flushed on the next turn).
 */
export class GroupCommit {
  private queue: Pending<unknown>[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Database,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Pending<unknown>);
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.db
        .transaction(() => {
          for (const item of batch) {
            try {
              // A nested transaction is a SAVEPOINT: it rolls back alone if the item throws.
              outcomes.push({ ok: true, value: this.db.transaction(item.work)() });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
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
