import { SqlStore } from "../db/store.ts";
import type { StoredOutput } from "./output-writer.ts";

/** A stored output as recorded with its job (the output store wrote its bytes). */
export type OutputRow = StoredOutput;

/** A stored output as downloads read it, with the account of its job. */
export interface OutputFileRow {
  path: string;
  content_type: string;
  size: bigint;
  sha256: string;
  account_id: string;
}

/**
 * The `job_outputs` table: a completed job's stored outputs (their bytes live in the blob backend),
 * their retention and the download cap. Rows are written only by `JobStore.complete`, in the
 * transaction that completes their job (a completed job always has its outputs); the retention
 * sweep (`FileStore.sweep`) deletes them with their bytes.
 */
export class JobOutputStore extends SqlStore {
  protected override s = {
    insert: this.q(
      `INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    indexes: this.q<{ idx: bigint }, [string]>("SELECT idx FROM job_outputs WHERE job_id = ? ORDER BY idx"),
    rows: this.q<{ idx: bigint; content_type: string; size: bigint; expires_at: bigint }, [string]>(
      "SELECT idx, content_type, size, expires_at FROM job_outputs WHERE job_id = ? ORDER BY idx",
    ),
    file: this.q<OutputFileRow, [string, number]>(
      `SELECT o.path, o.content_type, o.size, o.sha256, j.account_id FROM job_outputs o JOIN jobs j ON j.id = o.job_id
         WHERE o.job_id = ? AND o.idx = ?`,
    ),
    // The cap is one conditional UPDATE: concurrent downloads cannot overshoot it.
    countDownload: this.q<{ downloads: bigint }, [string, number, number]>(
      "UPDATE job_outputs SET downloads = downloads + 1 WHERE job_id = ? AND idx = ? AND downloads < ? RETURNING downloads",
    ),
    expired: this.q<{ job_id: string; idx: bigint; path: string }, [number, number]>(
      "SELECT job_id, idx, path FROM job_outputs WHERE expires_at < ? LIMIT ?",
    ),
    delete: this.q("DELETE FROM job_outputs WHERE job_id = ? AND idx = ?"),
  };

  /** Records a job's outputs, kept until `expiresAt`. Call inside the transaction that completes it. */
  async record(jobId: string, outputs: readonly OutputRow[], now: number, expiresAt: number): Promise<void> {
    // All sent at once (one round trip on PostgreSQL, where the settlement's COMMIT may follow them).
    await Promise.all(
      outputs.map((o) =>
        this.s.insert.run(jobId, o.idx, o.path, o.contentType, o.size, o.sha256, now, expiresAt),
      ),
    );
  }

  /** The indexes of a job's stored outputs, in order. */
  async indexes(jobId: string): Promise<number[]> {
    return (await this.s.indexes.all(jobId)).map(({ idx }) => Number(idx));
  }

  /** A job's stored outputs in index order: what each is, for previews (links come from the views). */
  async rows(
    jobId: string,
  ): Promise<{ idx: bigint; content_type: string; size: bigint; expires_at: bigint }[]> {
    return await this.s.rows.all(jobId);
  }

  /** One stored output with the account of its job, or null. */
  async file(jobId: string, idx: number): Promise<OutputFileRow | null> {
    return await this.s.file.get(jobId, idx);
  }

  /** Counts one full download unless the output already reached `cap`; false when it had. */
  async countDownload(jobId: string, idx: number, cap: number): Promise<boolean> {
    return (await this.s.countDownload.get(jobId, idx, cap)) !== null;
  }

  /** Up to `limit` outputs past their retention (the caller deletes them and their bytes). */
  async expired(now: number, limit: number): Promise<{ job_id: string; idx: bigint; path: string }[]> {
    return await this.s.expired.all(now, limit);
  }

  async delete(jobId: string, idx: bigint): Promise<void> {
    await this.s.delete.run(jobId, idx);
  }
}
