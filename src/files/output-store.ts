import { createHash } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface StoredOutput {
  idx: number;
  path: string;
  contentType: string;
  size: number;
  sha256: string;
}

/**
 * Local store of job outputs under <data dir>/files/outputs/<job id>/<index>. Files are written
 * to a temp name and renamed, so a crash never leaves a half-written output under its real name.
 */
export class OutputStore {
  constructor(readonly root: string) {}

  write(jobId: string, idx: number, bytes: Uint8Array, contentType: string): StoredOutput {
    const rel = join("outputs", jobId, String(idx));
    const dir = join(this.root, "outputs", jobId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.${idx}.${process.pid}.tmp`);
    writeFileSync(tmp, bytes, { mode: 0o600 });
    renameSync(tmp, join(this.root, rel));
    return {
      idx,
      path: rel,
      contentType,
      size: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    };
  }

  absolute(rel: string): string {
    return join(this.root, rel);
  }

  removeJob(jobId: string): void {
    rmSync(join(this.root, "outputs", jobId), { recursive: true, force: true });
  }
}
