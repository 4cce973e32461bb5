import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBackup } from "../../src/backup/create.ts";
import { RestoreError, restoreBackup } from "../../src/backup/restore.ts";
import type { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";
import { BACKUP_IS_SQLITE, onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { readBlob } from "../helpers/blobs.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";
import { runGengate, tempDir } from "../helpers/server.ts";

// Backup and restore of a server whose files are in an S3 bucket: the archive's files are read
// from the bucket, and a restore puts them into an (empty) bucket prefix.

let s3: TestS3;
let s: Awaited<ReturnType<typeof startFunded>>;
let source: S3BlobBackend;
let work: string;
let serveEnv: ReturnType<TestS3["serveEnv"]>;
beforeAll(async () => {
  if (onPostgres) return;
  s3 = await startS3();
  serveEnv = s3.serveEnv();
  const { env, toml, prefix } = serveEnv;
  s = await startFunded(toml, "100", env);
  source = s3.store({ prefix });
  work = tempDir("gengate-s3-backup-");
});
afterAll(async () => {
  s?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
  await s3?.stop();
});

async function keys(b: S3BlobBackend): Promise<string[]> {
  const out: string[] = [];
  for await (const o of b.list("")) out.push(o.key);
  return out.sort();
}

const S3_BACKUP = sqliteOnly("backup and restore with storage_url = s3://", BACKUP_IS_SQLITE);
describe.skipIf(onPostgres)(S3_BACKUP, () => {
  test("the archive holds the bucket's files; a restore refills an empty prefix byte for byte", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await s.fetch("/v1/files", {
        method: "POST",
        body: encodePng(16, 16, i),
        headers: { "content-type": "image/png" },
      });
      expect(r.status).toBe(201);
    }
    expect((await s.post("/v1/run/sandbox/image", { prompt: "x", num_images: 2 })).status).toBe(200);
    const stored = await keys(source);
    expect(stored.length).toBe(4);

    const archive = join(work, "b.tar");
    const result = await createBackup(s.dataDir, archive, { gzip: false, blobs: source });
    expect(result.files).toBe(4);
    expect(result.dropped).toEqual([]);

    const target = s3.store();
    const restored = await restoreBackup(archive, join(work, "restored"), { blobs: target });
    expect(restored.files).toBe(4);
    expect(await keys(target)).toEqual(stored);
    for (const k of stored)
      expect(Buffer.from(await readBlob(target, k)).equals(Buffer.from(await readBlob(source, k)))).toBe(
        true,
      );
    // The restored data dir holds the database and no file bytes.
    const db = new Database(join(work, "restored", "gengate.db"), { readonly: true });
    expect((db.query("SELECT count(*) AS n FROM files").get() as { n: number }).n).toBe(2);
    db.close();

    // A prefix that already holds files is refused, and nothing is written.
    await expect(restoreBackup(archive, join(work, "again"), { blobs: target })).rejects.toThrow(/not empty/);
  });

  test("a damaged archive leaves the target prefix empty", async () => {
    const archive = join(work, "b2.tar");
    await createBackup(s.dataDir, archive, { gzip: false, blobs: source });
    const bytes = await Bun.file(archive).bytes();
    // Cut after the files, before the manifest: the restore must fail and undo what it wrote.
    writeFileSync(archive, bytes.subarray(0, bytes.length - 4096));
    const target = s3.store();
    await expect(restoreBackup(archive, join(work, "broken"), { blobs: target })).rejects.toThrow(
      RestoreError,
    );
    expect(await keys(target)).toEqual([]);
  });

  test("the CLI: gengate backup and restore take storage_url from the environment and --config", async () => {
    const config = join(work, "s3.toml");
    writeFileSync(config, serveEnv.toml);
    const archive = join(work, "cli.tar.gz");
    const b = await runGengate(
      ["backup", archive, "--data-dir", s.dataDir, "--config", config, "--json"],
      serveEnv.env,
    );
    expect(b.stderr).toBe("");
    expect(b.code).toBe(0);
    expect((JSON.parse(b.stdout) as { files: number }).files).toBe((await keys(source)).length);
    const target = s3.serveEnv();
    const r = await runGengate(
      ["restore", archive, "--data-dir", join(work, "cli-restored"), "--config", config, "--json"],
      target.env,
    );
    expect(r.code).toBe(0);
    expect(await keys(s3.store({ prefix: target.prefix }))).toEqual(await keys(source));
  });
});
