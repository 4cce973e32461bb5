import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StorageSettings } from "../config/schema.ts";
import type { BlobBackend } from "./blob-backend.ts";
import { LocalBlobBackend } from "./blob-backend-local.ts";
import { S3BlobBackend } from "./blob-backend-s3.ts";

/**
 * The blob backend `storage` names: <data dir>/files by default, else the S3 bucket, with bytes on
 * their way in spooled under <data dir>/spool. The server opens it with `atStart` and removes the
 * spool's left-overs of a crash; other commands (backup) leave a running server's spool alone.
 */
export function openBlobBackend(
  storage: StorageSettings | undefined,
  dataDir: string,
  options: { atStart?: boolean } = {},
): BlobBackend {
  if (!storage || storage.kind === "file") return new LocalBlobBackend(join(dataDir, "files"));
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
  return new S3BlobBackend(storage, spool);
}
