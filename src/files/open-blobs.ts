import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StorageSettings } from "../config/schema.ts";
import type { BlobStore } from "./blobs.ts";
import { LocalBlobStore } from "./blobs-local.ts";
import { S3BlobStore } from "./blobs-s3.ts";

/**
 * The blob store `storage` names: <data dir>/files by default, else the S3 bucket, with bytes on
 * their way in spooled under <data dir>/spool. The server opens it with `atStart` and removes the
 * spool's left-overs of a crash; other commands (backup) leave a running server's spool alone.
 */
export function openBlobStore(
  storage: StorageSettings | undefined,
  dataDir: string,
  options: { atStart?: boolean } = {},
): BlobStore {
  if (!storage || storage.kind === "file") return new LocalBlobStore(join(dataDir, "files"));
  const spool = join(dataDir, "spool");
  if (options.atStart) {
    mkdirSync(spool, { recursive: true, mode: 0o700 }); // its free space is on /readyz and /metrics
    try {
      for (const name of readdirSync(spool))
        if (name.endsWith(".part")) rmSync(join(spool, name), { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  return new S3BlobStore(storage, spool);
}
