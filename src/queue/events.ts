import { type Bus, LocalBus, publishAfterCommit } from "../db/bus.ts";

/**
 * Notifications about jobs, over the bus (src/db/bus.ts) so that every instance hears them:
 * channel `jobs.changed` (payload: the job id) and `jobs.work` (payload: the provider). Sent after
 * the transaction that changed the job committed (`afterCommit`: a call made inside one waits for
 * its commit). This instance's listeners run synchronously inside the publish; other instances'
 * when the notification arrives. A notification is a HINT: waiters (/run, status streams) and
 * idle workers also poll every second, which is the guarantee. When the bus may have lost
 * notifications (a reconnect), every listener is woken to look at the database.
 */
export type JobListener = (jobId: string) => void;

export const JOBS_CHANGED = "jobs.changed";
export const JOBS_WORK = "jobs.work";

/** The longest a waiter sleeps between two reads of its job (the poll behind the hints). */
export const JOB_POLL_MS = 1000;

export class JobEvents {
  private readonly perJob = new Map<string, Set<JobListener>>();
  private readonly work = new Map<string, Set<() => void>>();

  /** Default: an in-process bus (one instance, tests). */
  constructor(private readonly bus: Bus = new LocalBus()) {
    const wakeAll = () => this.wakeAll();
    bus.subscribe(JOBS_CHANGED, (id) => this.fireJob(id), { onMaybeMissed: wakeAll });
    bus.subscribe(JOBS_WORK, (provider) => this.fireWork(provider), { onMaybeMissed: wakeAll });
  }

  onJob(jobId: string, fn: JobListener): () => void {
    let set = this.perJob.get(jobId);
    if (!set) {
      set = new Set();
      this.perJob.set(jobId, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.perJob.delete(jobId);
    };
  }

  /** The job changed (call after the commit; inside a transaction it waits for the commit). */
  changed(jobId: string): void {
    publishAfterCommit(this.bus, JOBS_CHANGED, jobId);
  }

  onWork(provider: string, fn: () => void): () => void {
    let set = this.work.get(provider);
    if (!set) {
      set = new Set();
      this.work.set(provider, set);
    }
    set.add(fn);
    return () => set.delete(fn);
  }

  /** A provider has a runnable job (call after the commit, like `changed`). */
  newWork(provider: string): void {
    publishAfterCommit(this.bus, JOBS_WORK, provider);
  }

  /**
   * A race-free wait on one job: listening starts here, before the caller reads the job, so a
   * change between that read and `wait` is not lost. `wait(ms)` resolves at once if the job
   * changed since the previous wait, else at its next change or after `ms`, or when `signal`
   * aborts. One waiter per watch; `close()` when done.
   */
  watch(jobId: string): JobWatch {
    let pending = false;
    let resolveWait: (() => void) | null = null;
    const off = this.onJob(jobId, () => {
      if (resolveWait) resolveWait();
      else pending = true;
    });
    return {
      wait: (ms, signal) => {
        if (pending || signal?.aborted) {
          pending = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolveWait = null;
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener("abort", done, { once: true });
          resolveWait = done;
        });
      },
      close: () => {
        off();
        resolveWait?.();
      },
    };
  }

  /** Resolves when the job changes or after `ms`, whichever comes first. */
  async waitForChange(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    const w = this.watch(jobId);
    try {
      await w.wait(ms, signal);
    } finally {
      w.close();
    }
  }

  private fireJob(jobId: string): void {
    const set = this.perJob.get(jobId);
    if (set) for (const fn of [...set]) fn(jobId);
  }

  private fireWork(provider: string): void {
    const set = this.work.get(provider);
    if (set) for (const fn of [...set]) fn();
  }

  /** Notifications may have been lost: every waiter and idle worker looks at the database. */
  private wakeAll(): void {
    for (const [id, set] of [...this.perJob]) for (const fn of [...set]) fn(id);
    for (const set of [...this.work.values()]) for (const fn of [...set]) fn();
  }
}

export interface JobWatch {
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}
