/**
 * In-process notifications about jobs, sent after the transaction that changed them committed.
 * Waiters (/run, SSE streams) subscribe per job; workers subscribe to "new work" per provider.
 * Nothing polls the database to find out that a job changed.
 */
export type JobListener = (jobId: string) => void;

export class JobEvents {
  private readonly perJob = new Map<string, Set<JobListener>>();
  private readonly work = new Map<string, Set<() => void>>();

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

  changed(jobId: string): void {
    const set = this.perJob.get(jobId);
    if (set) for (const fn of [...set]) fn(jobId);
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

  newWork(provider: string): void {
    const set = this.work.get(provider);
    if (set) for (const fn of [...set]) fn();
  }

  /** Resolves when the job changes or after `ms`, whichever comes first. */
  waitForChange(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = this.onJob(jobId, done);
      signal?.addEventListener("abort", done);
    });
  }
}
