import { closeSync, fdatasync, fsyncSync, openSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Power-loss durability for a WAL-mode SQLite connection without blocking the event loop
 * (docs/decisions.md, "Durable commits"). SQLite's `synchronous = FULL` calls fdatasync on the WAL
 * inside every COMMIT, on the thread that runs the statement: in a server on one JS thread that
 * stalls every request for the length of the sync (0.2 ms median, 3-20 ms at p90-p99 on the shared
 * disk this was measured on). Here the connection runs at NORMAL (no sync at commit) and the writer
 * awaits `sync()` after its commit, before it answers: the same fdatasync of the same WAL file, but
 * on libuv's thread pool, so the event loop keeps serving (and batching the next commits) meanwhile.
 *
 * `sync()` resolves once everything written to the WAL before the call is on stable storage. Calls
 * made while a sync is in flight join the next one (that sync may have started before their write),
 * so any number of commits during one sync share a single further sync: the disk's latency bounds
 * the rate of syncs, not of commits.
 *
 * The WAL is appended in frame order and replayed on recovery up to its last valid commit frame, so
 * a synced WAL holds every commit before the sync, exactly as FULL guarantees. Checkpoints at NORMAL
 * sync the WAL before copying it and the database after, as at FULL.
 */
export class WalSync {
  #fd: number | null = null;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  /** fdatasync calls completed (read by tests and the durability check). */
  syncs = 0;

  constructor(readonly walPath: string) {}

  sync(): Promise<void> {
    if (this.#running === null) return this.#start();
    this.#next ??= this.#running.then(
      () => {
        this.#next = null;
        return this.sync();
      },
      () => {
        this.#next = null;
        return this.sync();
      },
    );
    return this.#next;
  }

  #start(): Promise<void> {
    const fd = this.#open();
    const running = new Promise<void>((resolve, reject) => {
      fdatasync(fd, (err) => {
        this.#running = null;
        if (err) reject(err);
        else {
          this.syncs++;
          resolve();
        }
      });
    });
    this.#running = running;
    return running;
  }

  /**
   * The WAL file, opened once (SQLite keeps the same file while the connection that owns it is open:
   * it truncates or rewrites it from the start after a checkpoint, never replaces it). Its
   * directory is synced once, so the file's own entry survives a power loss too.
   */
  #open(): number {
    if (this.#fd !== null) return this.#fd;
    this.#fd = openSync(this.walPath, "r");
    const dir = openSync(dirname(this.walPath), "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    return this.#fd;
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
