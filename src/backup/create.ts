import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { currentSchemaVersion, openDatabase } from "../db/database.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { LocalBlobBackend } from "../files/blob-backend-local.ts";
import { TarWriter } from "../lib/tar.ts";
import { rfc3339 } from "../lib/time.ts";
import { dataDirPaths, secretFiles } from "../server/datadir.ts";
import { VERSION } from "../server/version.ts";
import {
  archiveSink,
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupManifest,
  DATABASE_NAME,
  type DroppedEntry,
  fileChunks,
  MANIFEST_NAME,
  type ManifestEntry,
} from "./manifest.ts";

export class BackupError extends Error {}

export interface BackupResult {
  backup: string;
  gzip: boolean;
  schema_version: number;
  /** Uploads and outputs in the archive. */
  files: number;
  /** Bytes of every entry (database, secrets, files) before compression. */
  bytes: number;
  archive_bytes: number;
  dropped: DroppedEntry[];
  duration_ms: number;
}

interface StoreRow {
  kind: "upload" | "output";
  path: string;
  size: bigint;
  sha256: string;
  /** upload: file id; output: job id and index. */
  id: string;
  idx: bigint | null;
}

/**
 * Writes one archive of a data dir (manifest.ts for the layout), consistent while the server runs:
 * 1. the database is copied with VACUUM INTO, one read transaction: a snapshot at one instant;
 * 2. every upload and output that snapshot references is copied from the blob backend (the data
 *    dir's files/, or the S3 bucket of storage_url), its size and SHA-256 checked against its row.
 *    Stored bytes are immutable once their row exists (committed whole, then the row), so the
 *    only change possible is deletion by the retention sweep or a DELETE; an object is opened
 *    before its entry is written (openStored), and stays readable once open;
 * 3. a referenced file that is gone (or damaged) is not archived and its row is removed from the
 *    snapshot the way the sweep removes it, so the restored database never points at absent bytes;
 * 4. the secrets, the amended snapshot and the manifest follow; the archive is written under a
 *    temporary name, fsynced and then linked to its final name (never over an existing file).
 */
export async function createBackup(
  dataDir: string,
  target: string,
  options: {
    gzip: boolean;
    /** Called once the snapshot is taken, before any file is read (tests race deletions here). */
    afterSnapshot?: () => Promise<void> | void;
    /** Where the files are (storage_url); default the data dir's files/. */
    blobs?: BlobBackend;
  },
): Promise<BackupResult> {
  const started = performance.now();
  const paths = dataDirPaths(dataDir);
  const blobs = options.blobs ?? new LocalBlobBackend(paths.files);
  if (existsSync(target)) throw new BackupError(`backup target ${target} already exists`);
  if (!existsSync(dirname(target))) throw new BackupError(`directory ${dirname(target)} does not exist`);
  if (!existsSync(paths.database)) throw new BackupError(`no database at ${paths.database}`);

  const partial = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
  const snapshot = join(dirname(target), `.${basename(target)}.${process.pid}.db`);
  const live = openDatabase(paths.database, { create: false });
  const sink = archiveSink(partial, options.gzip);
  let done = false;
  try {
    live.query("VACUUM INTO ?").run(snapshot);
    await options.afterSnapshot?.();
    const snap = new Database(snapshot, { strict: true, safeIntegers: true });
    const schemaVersion = currentSchemaVersion(snap);
    const rows = [
      ...snap
        .query<Omit<StoreRow, "kind" | "idx">, []>(
          "SELECT id, path, size, sha256 FROM files WHERE deleted_at IS NULL",
        )
        .all()
        .map((r) => ({ ...r, kind: "upload" as const, idx: null })),
      ...snap
        .query<Omit<StoreRow, "kind">, []>("SELECT job_id AS id, idx, path, size, sha256 FROM job_outputs")
        .all()
        .map((r) => ({ ...r, kind: "output" as const })),
    ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

    const tar = new TarWriter((chunk) => sink.write(chunk));
    const entries: ManifestEntry[] = [];
    const dropped: DroppedEntry[] = [];
    const stillLive = {
      upload: live.prepare<unknown, [string]>("SELECT 1 FROM files WHERE id = ? AND deleted_at IS NULL"),
      output: live.prepare<unknown, [string, bigint]>(
        "SELECT 1 FROM job_outputs WHERE job_id = ? AND idx = ?",
      ),
    };
    const isLive = (row: StoreRow) =>
      row.kind === "upload" ? !!stillLive.upload.get(row.id) : !!stillLive.output.get(row.id, row.idx!);

    let bytes = 0;
    for (const row of rows) {
      const name = `files/${row.path}`;
      const opened = await openStored(blobs, row.path);
      if (opened === null) {
        // The sweep commits before it removes the bytes: a row that is gone from the live database
        // means the file was deleted on purpose after the snapshot.
        dropped.push({ path: name, kind: row.kind, reason: isLive(row) ? "missing" : "deleted" });
        continue;
      }
      if (opened.size !== Number(row.size)) {
        await opened.chunks.return?.(undefined);
        dropped.push({ path: name, kind: row.kind, reason: "damaged" });
        continue;
      }
      const hash = createHash("sha256");
      const hashed = (async function* () {
        for await (const c of opened.chunks) {
          hash.update(c);
          yield c;
        }
      })();
      await tar.file({ name, size: opened.size, mode: 0o600, mtime: Math.floor(Date.now() / 1000) }, hashed);
      const sha256 = hash.digest("hex");
      if (sha256 !== row.sha256) {
        // Already in the archive: it stays there under its real digest, is listed as dropped and
        // not referenced by the database; restore leaves it out.
        dropped.push({ path: name, kind: row.kind, reason: "damaged" });
      }
      entries.push({ path: name, kind: row.kind, size: opened.size, sha256, mode: "0600" });
      bytes += opened.size;
    }

    if (dropped.length > 0) {
      // What the retention sweep does to an expired row, done to the snapshot.
      const now = Date.now();
      const byPath = new Map(rows.map((r) => [`files/${r.path}`, r]));
      const markFile = snap.prepare("UPDATE files SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL");
      const dropOutput = snap.prepare("DELETE FROM job_outputs WHERE job_id = ? AND idx = ?");
      snap.transaction(() => {
        for (const d of dropped) {
          const row = byPath.get(d.path)!;
          if (row.kind === "upload") markFile.run(now, row.id);
          else dropOutput.run(row.id, row.idx!);
        }
      })();
    }
    snap.close();

    for (const path of secretFiles(paths)) {
      let value: Buffer;
      try {
        value = readFileSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      const name = basename(path);
      await tar.file({ name, size: value.length, mode: 0o600, mtime: Math.floor(Date.now() / 1000) }, value);
      entries.push({ path: name, kind: "secret", size: value.length, sha256: sha256Of(value), mode: "0600" });
      bytes += value.length;
    }

    const dbFd = openSync(snapshot, "r");
    try {
      const size = fstatSync(dbFd).size;
      const hash = createHash("sha256");
      const hashed = (function* () {
        for (const c of fileChunks(dbFd, size)) {
          hash.update(c);
          yield c;
        }
      })();
      await tar.file(
        { name: DATABASE_NAME, size, mode: 0o600, mtime: Math.floor(Date.now() / 1000) },
        hashed,
      );
      entries.push({ path: DATABASE_NAME, kind: "database", size, sha256: hash.digest("hex"), mode: "0600" });
      bytes += size;
    } finally {
      closeSync(dbFd);
    }

    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      gengate_version: VERSION,
      schema_version: schemaVersion,
      created_at: rfc3339(Math.floor(Date.now() / 1000))!,
      entries,
      dropped,
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    await tar.file(
      { name: MANIFEST_NAME, size: manifestBytes.length, mode: 0o600, mtime: Math.floor(Date.now() / 1000) },
      manifestBytes,
    );
    await tar.finish();
    await sink.close();
    const fd = openSync(partial, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // link, not rename: it fails instead of replacing a file created at the target meanwhile.
    try {
      linkSync(partial, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST")
        throw new BackupError(`backup target ${target} already exists`);
      throw err;
    }
    done = true;
    return {
      backup: target,
      gzip: options.gzip,
      schema_version: schemaVersion,
      files: entries.filter((e) => e.kind === "upload" || e.kind === "output").length,
      bytes,
      archive_bytes: statSync(target).size,
      dropped,
      duration_ms: Math.round(performance.now() - started),
    };
  } finally {
    if (!done) sink.destroy();
    live.close();
    rmSync(partial, { force: true });
    rmSync(snapshot, { force: true });
    rmSync(`${snapshot}-wal`, { force: true });
    rmSync(`${snapshot}-shm`, { force: true });
  }
}

/**
 * The stored bytes of a key, opened before the archive commits to an entry: its size, and its
 * chunks with the first one already read, so the object is open (a local file stays readable once
 * open; an S3 GET in flight serves the whole object) and a removal after that cannot cut the entry
 * short. Null when nothing is stored under the key.
 */
async function openStored(
  blobs: BlobBackend,
  key: string,
): Promise<{ size: number; chunks: AsyncGenerator<Uint8Array> } | null> {
  const size = await blobs.size(key);
  if (size === null) return null;
  const source = blobs.stream(key)[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await source.next();
  } catch (err) {
    if ((await blobs.size(key)) === null) return null; // removed between the two calls
    throw err;
  }
  const chunks = (async function* () {
    let n = first;
    while (!n.done) {
      yield n.value;
      n = await source.next();
    }
  })();
  return { size, chunks };
}

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
