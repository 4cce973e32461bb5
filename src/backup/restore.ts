import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { currentSchemaVersion } from "../db/database.ts";
import { LATEST_SCHEMA_VERSION } from "../db/migrations.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { readTar, TarError } from "../lib/tar.ts";
import { dataDirPaths, secretFiles } from "../server/datadir.ts";
import {
  archiveSource,
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupManifest,
  DATABASE_NAME,
  MANIFEST_NAME,
  STORE_PATH,
  sniffArchive,
} from "./manifest.ts";

export class RestoreError extends Error {}

export interface RestoreResult {
  data_dir: string;
  backup_created_at: string;
  schema_version: number;
  files: number;
  bytes: number;
}

const MANIFEST_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Fills an empty (or new) data dir from a backup archive. Every entry name is checked against the
 * layout before anything is written (no path leaves the data dir), every byte is hashed while it is
 * written and checked against the manifest, and the restored database must reference only files
 * the archive held. On any failure everything written is removed again and the dir is left as found.
 */
export async function restoreBackup(
  archive: string,
  dataDir: string,
  options: {
    /** Where the files go (storage_url); default the data dir's files/. An S3 prefix must be empty. */
    blobs?: BlobBackend;
  } = {},
): Promise<RestoreResult> {
  if (!existsSync(archive) || !statSync(archive).isFile())
    throw new RestoreError(`no backup archive at ${archive}`);
  const kind = sniffArchive(archive);
  if (kind === "sqlite") {
    throw new RestoreError(
      `${archive} is a bare SQLite database (a backup from an older gengate): copy it to <data dir>/gengate.db (mode 0600) instead; it holds no files or secrets`,
    );
  }
  if (kind === null) throw new RestoreError(`${archive} is not a gengate backup (neither tar nor gzip)`);

  const paths = dataDirPaths(dataDir);
  const created = !existsSync(paths.root);
  if (created) mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  else {
    if (!statSync(paths.root).isDirectory()) throw new RestoreError(`${paths.root} is not a directory`);
    if (readdirSync(paths.root).length > 0)
      throw new RestoreError(`data dir ${paths.root} is not empty; restore needs an empty or new directory`);
  }
  chmodSync(paths.root, 0o700);
  // Files go to the bucket when one is named; into the data dir (as before) otherwise.
  const bucket = options.blobs?.kind === "s3" ? options.blobs : null;
  if (bucket) {
    for await (const o of bucket.list("")) {
      if (created) rmSync(paths.root, { recursive: true, force: true });
      throw new RestoreError(
        `${bucket.location} is not empty (${o.key}); restore needs an empty bucket prefix`,
      );
    }
  }
  const inBucket = new Set<string>();

  const secretNames = new Set(secretFiles(paths).map((p) => basename(p)));
  const written = new Map<string, { size: number; sha256: string }>();
  let manifestText: string | null = null;
  try {
    for await (const entry of readTar(archiveSource(archive, kind))) {
      const { name, type } = entry.header;
      if (type !== "file") throw new RestoreError(`unexpected ${type} entry ${name} in the archive`);
      if (written.has(name) || (name === MANIFEST_NAME && manifestText !== null))
        throw new RestoreError(`entry ${name} appears twice in the archive`);
      if (name === MANIFEST_NAME) {
        if (entry.header.size > MANIFEST_MAX_BYTES) throw new RestoreError("the manifest is too large");
        const parts: Uint8Array[] = [];
        for await (const c of entry.body) parts.push(c);
        manifestText = Buffer.concat(parts).toString("utf8");
        continue;
      }
      if (name !== DATABASE_NAME && !secretNames.has(name) && !STORE_PATH.test(name))
        throw new RestoreError(`unexpected entry ${name} in the archive`);
      const key = bucket && STORE_PATH.test(name) ? name.slice("files/".length) : null;
      const target = key ? bucket!.tempPath(key) : join(paths.root, name);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      const fd = openSync(target, "wx", 0o600);
      const hash = createHash("sha256");
      let size = 0;
      try {
        for await (const chunk of entry.body) {
          hash.update(chunk);
          size += chunk.byteLength;
          for (let off = 0; off < chunk.byteLength; ) off += writeSync(fd, chunk, off);
        }
      } finally {
        closeSync(fd);
      }
      if (key) {
        inBucket.add(key);
        await bucket!.commit(target, key, "application/octet-stream");
      }
      written.set(name, { size, sha256: hash.digest("hex") });
    }

    if (manifestText === null)
      throw new RestoreError("the archive has no manifest.json (incomplete backup?)");
    const manifest = parseManifest(manifestText);
    if (manifest.schema_version > LATEST_SCHEMA_VERSION) {
      throw new RestoreError(
        `the backup is from a newer gengate (schema ${manifest.schema_version}; this one knows ${LATEST_SCHEMA_VERSION}): upgrade gengate`,
      );
    }
    const listed = new Set<string>();
    for (const e of manifest.entries) {
      listed.add(e.path);
      const got = written.get(e.path);
      if (!got) throw new RestoreError(`${e.path} is listed in the manifest but missing from the archive`);
      if (got.size !== e.size || got.sha256 !== e.sha256)
        throw new RestoreError(`${e.path}: size or SHA-256 differs from the manifest (damaged archive)`);
    }
    for (const name of written.keys())
      if (!listed.has(name)) throw new RestoreError(`${name} is in the archive but not in its manifest`);
    if (!written.has(DATABASE_NAME)) throw new RestoreError("the archive holds no database");

    // Damaged files archived as found on disk are not referenced by the database: leave them out.
    for (const d of manifest.dropped) {
      if (!written.delete(d.path)) continue;
      if (bucket && STORE_PATH.test(d.path)) {
        const key = d.path.slice("files/".length);
        await bucket.delete([key]);
        inBucket.delete(key);
      } else rmSync(join(paths.root, d.path), { force: true });
    }
    checkDatabase(join(paths.root, DATABASE_NAME), written);
    if (existsSync(paths.files)) chmodSync(paths.files, 0o700);
    else mkdirSync(paths.files, { mode: 0o700 });

    let files = 0;
    let bytes = 0;
    for (const [name, w] of written) {
      bytes += w.size;
      if (name.startsWith("files/")) files += 1;
    }
    return {
      data_dir: paths.root,
      backup_created_at: manifest.created_at,
      schema_version: manifest.schema_version,
      files,
      bytes,
    };
  } catch (err) {
    if (bucket) await bucket.delete([...inBucket]).catch(() => {});
    for (const name of readdirSync(paths.root))
      rmSync(join(paths.root, name), { recursive: true, force: true });
    if (created) rmSync(paths.root, { recursive: true, force: true });
    if (err instanceof TarError) throw new RestoreError(`damaged archive: ${err.message}`);
    if (
      (err as NodeJS.ErrnoException).code === "Z_DATA_ERROR" ||
      (err as Error).message?.includes("unexpected end")
    )
      throw new RestoreError(`damaged archive: ${(err as Error).message}`);
    throw err;
  }
}

function parseManifest(text: string): BackupManifest {
  let m: BackupManifest;
  try {
    m = JSON.parse(text) as BackupManifest;
  } catch {
    throw new RestoreError("manifest.json is not valid JSON");
  }
  if (m?.format !== BACKUP_FORMAT) throw new RestoreError("manifest.json is not a gengate backup manifest");
  if (m.format_version !== BACKUP_FORMAT_VERSION)
    throw new RestoreError(
      `backup format version ${m.format_version} is not supported (this gengate reads ${BACKUP_FORMAT_VERSION})`,
    );
  if (
    !Array.isArray(m.entries) ||
    !Array.isArray(m.dropped) ||
    !Number.isInteger(m.schema_version) ||
    m.entries.some(
      (e) => typeof e?.path !== "string" || !Number.isInteger(e.size) || typeof e.sha256 !== "string",
    ) ||
    m.dropped.some((d) => typeof d?.path !== "string")
  )
    throw new RestoreError("manifest.json is malformed");
  return m;
}

/** The restored database is intact and references only files that were restored, byte for byte. */
function checkDatabase(path: string, written: Map<string, { size: number; sha256: string }>): void {
  let db: Database;
  try {
    db = new Database(path, { strict: true, safeIntegers: true, create: false });
  } catch (err) {
    throw new RestoreError(`the archived database cannot be opened (${(err as Error).message})`);
  }
  try {
    const check = db.query<{ quick_check: string }, []>("PRAGMA quick_check").get();
    if (check?.quick_check !== "ok")
      throw new RestoreError(`the archived database is damaged (${check?.quick_check})`);
    if (currentSchemaVersion(db) > LATEST_SCHEMA_VERSION)
      throw new RestoreError("the archived database is from a newer gengate: upgrade gengate");
    const rows = db
      .query<{ path: string; size: bigint; sha256: string }, []>(
        `SELECT path, size, sha256 FROM files WHERE deleted_at IS NULL
         UNION ALL SELECT path, size, sha256 FROM job_outputs`,
      )
      .all();
    for (const r of rows) {
      const got = written.get(`files/${r.path}`);
      if (!got || got.size !== Number(r.size) || got.sha256 !== r.sha256)
        throw new RestoreError(
          `the database references files/${r.path}, which the archive does not hold intact`,
        );
    }
  } finally {
    db.close();
  }
}
