import { jsonList, SqlStore } from "../db/store.ts";

/** Recorded answers older than this are pruned: a job's time limit is far shorter (hours at most). */
const KEEP_MS = 7 * 24 * 3600 * 1000;

/**
 * The final answers upstreams posted about jobs (table `upstream_callbacks`, migration 022): a cog
 * server's terminal webhook, recorded by whichever instance received it so that the worker waiting on
 * the job reads it there, on another instance, or after a restart (src/providers/cog/webhooks.ts).
 */
export class UpstreamCallbackStore extends SqlStore {
  protected override s = {
    // DO NOTHING: the first final answer wins; a replay or a late duplicate changes nothing.
    record: this.q<null, [string, string, string, number]>(
      "INSERT INTO upstream_callbacks (job_id, provider, payload, received_at) VALUES (?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING",
    ),
    get: this.q<{ payload: string }, [string, string]>(
      "SELECT payload FROM upstream_callbacks WHERE job_id = ? AND provider = ?",
    ),
    prune: this.q<null, [number]>("DELETE FROM upstream_callbacks WHERE received_at < ?"),
    deleteForJobs: this.q<null, [string]>(
      `DELETE FROM upstream_callbacks WHERE job_id IN (${jsonList(this.sql)})`,
    ),
  };

  /** Records a job's final answer; false when one was recorded already (nothing changed). */
  async record(jobId: string, provider: string, payload: string, now: number): Promise<boolean> {
    const { changes } = await this.s.record.run(jobId, provider, payload, now);
    if (changes > 0) await this.s.prune.run(now - KEEP_MS);
    return changes > 0;
  }

  /** Deletes the answers about the jobs in `idsJson` (a JSON array of ids: the retention purge). */
  async deleteForJobs(idsJson: string): Promise<number> {
    return (await this.s.deleteForJobs.run(idsJson)).changes;
  }

  /** The final answer recorded for a job of `provider`, as it came (JSON text), or null. */
  async get(jobId: string, provider: string): Promise<string | null> {
    return (await this.s.get.get(jobId, provider))?.payload ?? null;
  }
}
