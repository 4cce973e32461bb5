import { closeSync, copyFileSync, linkSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { BlobBackend } from "../files/blob-backend.ts";
import { LocalBlobBackend } from "../files/blob-backend-local.ts";
import { MigrateFailed, MigrateRefused } from "./migrate-errors.ts";

/**
 * The stored files of `gengate migrate-data` (src/backup/migrate-data.ts): the source's checked
 * present, the target prefix checked empty (or holding only what an interrupted run wrote, byte for
 * byte), then each file copied through the BlobBackend port and its SHA-256 checked against its row.
 */

/** A file a row references (`files` not deleted, `job_outputs`). */
export interface StoredFile {
  path: string;
  size: bigint;
  sha256: string;
  content_type: string;
}

/** Referenced files absent from the store or of another size than their row says. */
export async function missingFiles(blobs: BlobBackend, files: StoredFile[]): Promise<string[]> {
  const out: string[] = [];
  await pool(files, 8, async (f) => {
    const size = await blobs.size(f.path);
    if (size === null) out.push(`${f.path} (missing)`);
    else if (size !== Number(f.size)) out.push(`${f.path} (${size} bytes, its row says ${f.size})`);
  });
  return out.sort();
}

/**
 * The objects already under the target prefix: only keys this copy would write are allowed (left by
 * an interrupted run); they are checked byte for byte (SHA-256) and kept. Anything else is refused.
 */
export async function targetObjects(blobs: BlobBackend, files: StoredFile[]): Promise<Map<string, number>> {
  const wanted = new Map(files.map((f) => [f.path, f]));
  const present = new Map<string, number>();
  const foreign: string[] = [];
  for await (const o of blobs.list("")) {
    if (wanted.has(o.key)) present.set(o.key, o.size);
    else foreign.push(o.key);
  }
  if (foreign.length)
    throw new MigrateRefused(
      `the target bucket prefix ${blobs.location} is not empty (${foreign.length} objects gengate would not write, e.g. ${foreign[0]}); give an empty prefix`,
    );
  const differ: string[] = [];
  await pool([...present.keys()], 4, async (key) => {
    const f = wanted.get(key)!;
    if (present.get(key) !== Number(f.size) || (await sha256Of(blobs.stream(key))) !== f.sha256)
      differ.push(key);
  });
  if (differ.length)
    throw new MigrateRefused(
      `the target bucket prefix ${blobs.location} holds ${differ.length} objects under gengate's keys with other bytes (e.g. ${differ[0]}); give an empty prefix`,
    );
  return present;
}

export async function copyFiles(
  from: BlobBackend,
  to: BlobBackend,
  files: StoredFile[],
  present: Map<string, number>,
  concurrency: number,
  say: (line: string) => void,
): Promise<void> {
  const todo = files.filter((f) => !present.has(f.path));
  const total = todo.reduce((n, f) => n + Number(f.size), 0);
  let done = 0;
  let bytes = 0;
  let last = 0;
  await pool(todo, concurrency, async (f) => {
    const tmp = to.tempPath(f.path);
    let sha: string;
    try {
      sha = await spool(from, f.path, tmp);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    if (sha !== f.sha256) {
      rmSync(tmp, { force: true });
      throw new MigrateFailed(
        `${f.path} in ${from.location} does not match its row's SHA-256 (the source is damaged)`,
      );
    }
    await to.commit(tmp, f.path, f.content_type);
    done++;
    bytes += Number(f.size);
    if (performance.now() - last > 1000 || done === todo.length) {
      last = performance.now();
      say(`files: ${done}/${todo.length} (${mb(bytes)} of ${mb(total)} MB)`);
    }
  });
}

/**
 * Puts `key`'s bytes at the local path `tmp` and returns their SHA-256: a hard link to the source
 * file when both are local (no copy), else a streamed copy.
 */
async function spool(from: BlobBackend, key: string, tmp: string): Promise<string> {
  if (from instanceof LocalBlobBackend) {
    const path = join(from.root, key);
    try {
      linkSync(path, tmp);
    } catch {
      copyFileSync(path, tmp);
    }
    return sha256Of(from.stream(key));
  }
  const hash = new Bun.CryptoHasher("sha256");
  const fd = openSync(tmp, "w", 0o600);
  try {
    for await (const chunk of from.stream(key)) {
      hash.update(chunk);
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

export async function sha256Of(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const c of chunks) hash.update(c);
  return hash.digest("hex");
}

/** Runs `fn` over the items, `n` at a time; the first error stops taking new items and is thrown. */
export async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  if (failed !== null) throw failed;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
