import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { errorFields, log } from "../lib/log.ts";
import { nextTurn } from "../lib/next-turn.ts";
import { rfc3339 } from "../lib/time.ts";
import type { BlobBackend } from "./blob-backend.ts";
import type { JobOutputStore } from "./job-output-store.ts";

export const FILE_ID = /^file_[0-9A-Za-z]{24}$/;

export interface FileRow {
  id: string;
  account_id: string;
  key_id: string | null;
  content_type: string;
  size: bigint;
  sha256: string;
  path: string;
  width: bigint | null;
  height: bigint | null;
  created_at: bigint;
  expires_at: bigint;
  /** Always null since migration 030 (a deleted or expired file loses its row); a restored backup may mark one. */
  deleted_at: bigint | null;
}

const SWEEP_BATCH = 1000;

/** The output records the retention sweep removes (JobOutputStore owns the job_outputs table). */
export type ExpiringOutputs = Pick<JobOutputStore, "expired" | "delete" | "in">;

/** The files table, and the removal of expired bytes (uploads, job outputs) from the blob backend. */
export class FileStore extends SqlStore {
  protected override s = {
    insert: this.q(
      `INSERT INTO files (id, account_id, key_id, content_type, size, sha256, path, width, height, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    get: this.q<FileRow, [string]>("SELECT * FROM files WHERE id = ?"),
    // The row goes (migration 030): a file that is not there is what a deleted or expired one is,
    // and a kept row was 356 bytes per upload forever. The storage triggers (008) count it out.
    deleteRow: this.q<null, [string]>("DELETE FROM files WHERE id = ? AND deleted_at IS NULL"),
    expiredFiles: this.q<FileRow, [number]>(
      `SELECT * FROM files WHERE deleted_at IS NULL AND expires_at < ? LIMIT ${SWEEP_BATCH}`,
    ),
    // Kept by triggers (migration 008) in the transactions that add and remove the rows.
    usage: this.q<{ files: bigint | null; outputs: bigint | null }, []>(
      `SELECT (SELECT bytes FROM storage_usage WHERE kind = 'uploads') AS files,
                (SELECT bytes FROM storage_usage WHERE kind = 'outputs') AS outputs`,
    ),
  };

  constructor(
    sql: Sql,
    private readonly blobs: BlobBackend,
    private outputs: ExpiringOutputs,
  ) {
    super(sql);
  }

  protected override bound(tx: Sql): void {
    this.outputs = this.outputs.in(tx);
  }

  async insert(row: Omit<FileRow, "deleted_at">): Promise<void> {
    await this.s.insert.run(
      row.id,
      row.account_id,
      row.key_id,
      row.content_type,
      row.size,
      row.sha256,
      row.path,
      row.width,
      row.height,
      row.created_at,
      row.expires_at,
    );
  }

  /** A live file of this account: unknown, deleted, expired and foreign files are all null. */
  async getLive(id: string, accountId: string, now = Date.now()): Promise<FileRow | null> {
    if (!FILE_ID.test(id)) return null;
    const row = await this.s.get.get(id);
    if (!row || row.account_id !== accountId || row.deleted_at !== null || Number(row.expires_at) <= now)
      return null;
    return row;
  }

  /** Any live file by id (for signed content links, already bound to the id by the signature). */
  async getById(id: string, now = Date.now()): Promise<FileRow | null> {
    if (!FILE_ID.test(id)) return null;
    const row = await this.s.get.get(id);
    return row && row.deleted_at === null && Number(row.expires_at) > now ? row : null;
  }

  /** The local directory whose free space decides whether uploads are accepted (the spool). */
  get root(): string {
    return this.blobs.spoolDir;
  }

  /**
   * Deletes the file's row, then removes its bytes. A store that cannot be reached leaves the bytes
   * (unreferenced, logged): the row is what makes a file exist.
   */
  async delete(row: FileRow): Promise<void> {
    if ((await this.s.deleteRow.run(row.id)).changes === 1) await this.removeBytes([row.path]);
  }

  private async removeBytes(paths: string[]): Promise<void> {
    try {
      await this.blobs.delete(paths);
    } catch (err) {
      log("warn", "stored bytes not removed", {
        store: this.blobs.location,
        count: paths.length,
        ...errorFields(err),
      });
    }
  }

  /**
   * Retention: removes expired uploads and outputs, rows and bytes, until none is left. Each batch
   * of up to SWEEP_BATCH of each commits once, then its bytes are removed (a crash in between
   * leaves unreferenced bytes, never a row without its file); the event loop gets a turn between
   * batches. Returns how many went.
   */
  async sweep(now = Date.now(), signal?: AbortSignal): Promise<{ files: number; outputs: number }> {
    let files = 0;
    let outputs = 0;
    for (;;) {
      // The write lock first: operator commands may write at the same time.
      const gone = await this.atomic(async (self) => {
        const paths: string[] = [];
        const f = await self.s.expiredFiles.all(now);
        for (const row of f) if ((await self.s.deleteRow.run(row.id)).changes === 1) paths.push(row.path);
        const o = await self.outputs.expired(now, SWEEP_BATCH);
        for (const row of o) {
          await self.outputs.delete(row.job_id, row.idx);
          paths.push(row.path);
        }
        return { files: f.length, outputs: o.length, paths };
      });
      await this.removeBytes(gone.paths);
      files += gone.files;
      outputs += gone.outputs;
      if ((gone.files < SWEEP_BATCH && gone.outputs < SWEEP_BATCH) || signal?.aborted)
        return { files, outputs };
      await nextTurn();
    }
  }

  async usageBytes(): Promise<{ files: number; outputs: number }> {
    const u = (await this.s.usage.get())!;
    return { files: Number(u.files ?? 0n), outputs: Number(u.outputs ?? 0n) };
  }
}

export function fileView(f: FileRow) {
  return {
    file_id: f.id,
    object: "file" as const,
    content_type: f.content_type,
    size: Number(f.size),
    sha256: f.sha256,
    ...(f.width !== null ? { width: Number(f.width), height: Number(f.height) } : {}),
    created_at: rfc3339(Math.floor(Number(f.created_at) / 1000))!,
    expires_at: rfc3339(Math.floor(Number(f.expires_at) / 1000))!,
  };
}
