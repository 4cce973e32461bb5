import { once } from "node:events";
import { closeSync, createReadStream, createWriteStream, openSync, readSync } from "node:fs";
import { finished } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";

/**
 * The backup archive: a POSIX ustar file (gzip-compressed when its name ends in .gz or .tgz) holding
 *   files/uploads/<file id>, files/outputs/<job id>/<index>   the file store, as the database references it
 *   server.secret, server.secret.previous, admin.token        the data dir's secrets
 *   gengate.db                                                the database snapshot
 *   manifest.json                                             last: what is in it, with sizes and SHA-256
 * The manifest comes last because the database snapshot is amended (rows of files that vanished
 * while they were being copied) after the files are read. docs/operations.md describes the rules.
 */
export const BACKUP_FORMAT = "gengate-backup";
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_NAME = "manifest.json";
export const DATABASE_NAME = "gengate.db";

export type EntryKind = "database" | "secret" | "upload" | "output";

export interface ManifestEntry {
  path: string;
  kind: EntryKind;
  size: number;
  sha256: string;
  /** Octal file mode to restore, e.g. "0600". */
  mode: string;
}

export interface DroppedEntry {
  path: string;
  kind: "upload" | "output";
  /**
   * deleted: removed by the retention sweep or a DELETE after the database snapshot was taken;
   * missing / damaged: absent, or not matching its recorded size and SHA-256, while the live
   * database still referenced it (data lost on the live server: investigate).
   */
  reason: "deleted" | "missing" | "damaged";
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  gengate_version: string;
  schema_version: number;
  created_at: string;
  entries: ManifestEntry[];
  dropped: DroppedEntry[];
}

/** Upload and output paths exactly as the stores write them (nothing else is accepted on restore). */
export const STORE_PATH = /^files\/(uploads\/file_[0-9A-Za-z]{24}|outputs\/[0-9a-f-]{36}\/\d{1,4})$/;

export function isGzipName(path: string): boolean {
  return /\.(gz|tgz)$/i.test(path);
}

/** A byte sink writing to a new file (mode 0600), through gzip if asked. */
export function archiveSink(path: string, gzip: boolean) {
  const file = createWriteStream(path, { flags: "wx", mode: 0o600 });
  // zlib's default level: level 1 was faster but made already-compressed media larger than plain tar.
  const head = gzip ? createGzip() : file;
  if (gzip) head.pipe(file);
  let failed: Error | null = null;
  const fail = (err: Error) => {
    failed ??= err;
  };
  head.on("error", fail);
  file.on("error", fail);
  return {
    async write(chunk: Uint8Array): Promise<void> {
      if (failed) throw failed;
      if (!head.write(chunk)) await once(head, "drain");
    },
    async close(): Promise<void> {
      if (failed) throw failed;
      head.end();
      await finished(file);
      if (failed) throw failed;
    },
    destroy(): void {
      head.destroy();
      file.destroy();
    },
  };
}

export type ArchiveKind = "tar" | "gzip" | "sqlite";

/** What a file holds, by its first bytes. */
export function sniffArchive(path: string): ArchiveKind | null {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(512);
    const n = readSync(fd, head, 0, 512, 0);
    if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
    if (n >= 16 && head.subarray(0, 16).toString("latin1") === "SQLite format 3\0") return "sqlite";
    if (n >= 263 && head.subarray(257, 262).toString("latin1") === "ustar") return "tar";
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The archive's tar bytes as a stream, gunzipped when needed. */
export function archiveSource(path: string, kind: "tar" | "gzip"): AsyncIterable<Uint8Array> {
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  if (kind === "tar") return raw;
  const gunzip = createGunzip();
  raw.on("error", (err) => gunzip.destroy(err));
  return raw.pipe(gunzip);
}

/** A file's bytes in fresh chunks (a sink may keep a chunk after write returns), exactly `size` of them. */
export function* fileChunks(fd: number, size: number, chunkSize = 1 << 20): Generator<Uint8Array> {
  let left = size;
  let position = 0;
  while (left > 0) {
    const buf = Buffer.allocUnsafe(Math.min(chunkSize, left));
    const n = readSync(fd, buf, 0, buf.length, position);
    if (n === 0) throw new Error("the file shrank while it was being read");
    position += n;
    left -= n;
    yield n === buf.length ? buf : buf.subarray(0, n);
  }
}
