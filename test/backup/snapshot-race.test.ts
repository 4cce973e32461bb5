import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBackup } from "../../src/backup/create.ts";
import { restoreBackup } from "../../src/backup/restore.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";
import { BACKUP_IS_SQLITE, onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { tempDir } from "../helpers/server.ts";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const VANISHING = sqliteOnly(
  "files that vanish between the database snapshot and the file copy",
  BACKUP_IS_SQLITE,
);
describe.skipIf(onPostgres)(VANISHING, () => {
  test("deleted through the API: 'deleted'; gone from disk only: 'missing'; altered: 'damaged'; the restore is consistent", async () => {
    const s = await startFunded();
    cleanups.push(() => s.cleanup());
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.fetch("/v1/files", {
        method: "POST",
        body: encodePng(24, 24, i),
        headers: { "content-type": "image/png" },
      });
      ids.push(((await r.json()) as { file_id: string }).file_id);
    }
    const run = await s.post("/v1/run/sandbox/image", { prompt: "x", num_images: 2 });
    expect(run.status).toBe(200);
    const job = run.headers.get("x-fal-request-id")!;

    const work = tempDir("gengate-race-");
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const result = await createBackup(s.dataDir, join(work, "b.tar"), {
      gzip: false,
      afterSnapshot: async () => {
        // The snapshot still references all of these.
        expect((await s.fetch(`/v1/files/${ids[0]}`, { method: "DELETE" })).status).toBe(200);
        rmSync(join(s.dataDir, "files", "outputs", job, "1"));
        // Same size, other bytes: damaged on disk.
        const p = join(s.dataDir, "files", "uploads", ids[2]!);
        const b = readFileSync(p);
        b[b.length - 1]! ^= 0xff;
        writeFileSync(p, b);
      },
    });
    // Sorted alike on both sides: the upload ids are random, so their order is too.
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    expect(result.dropped.sort(byPath)).toEqual(
      [
        { path: `files/outputs/${job}/1`, kind: "output" as const, reason: "missing" as const },
        { path: `files/uploads/${ids[0]}`, kind: "upload" as const, reason: "deleted" as const },
        { path: `files/uploads/${ids[2]}`, kind: "upload" as const, reason: "damaged" as const },
      ].sort(byPath),
    );
    // Two uploads and one output read; the damaged one is archived as found but not restored.
    expect(result.files).toBe(2 + 1);

    const dir = join(work, "restored");
    const restored = await restoreBackup(join(work, "b.tar"), dir);
    expect(restored.files).toBe(2);
    const db = new Database(join(dir, "gengate.db"), { readonly: true });
    const files = db.query("SELECT id, deleted_at IS NOT NULL AS gone FROM files").all() as {
      id: string;
      gone: number;
    }[];
    const outputs = db.query("SELECT idx FROM job_outputs WHERE job_id = ?").all(job);
    const usage = db.query("SELECT kind, bytes FROM storage_usage ORDER BY kind").all() as {
      kind: string;
      bytes: number;
    }[];
    const live = db
      .query(
        "SELECT (SELECT sum(size) FROM files WHERE deleted_at IS NULL) AS uploads, (SELECT sum(size) FROM job_outputs) AS outputs",
      )
      .get() as { uploads: number; outputs: number };
    db.close();
    expect(files.find((f) => f.id === ids[0])!.gone).toBe(1);
    expect(files.filter((f) => !f.gone).map((f) => f.id)).toEqual([ids[1]!]);
    expect(outputs).toEqual([{ idx: 0 }]);
    // The usage counters (kept by triggers) agree with the rows that are left.
    expect(usage).toEqual([
      { kind: "outputs", bytes: live.outputs },
      { kind: "uploads", bytes: live.uploads },
    ]);
    expect(existsSync(join(dir, "files", "uploads", ids[0]!))).toBe(false);
    expect(existsSync(join(dir, "files", "uploads", ids[2]!))).toBe(false);
    expect(existsSync(join(dir, "files", "outputs", job, "0"))).toBe(true);
  }, 60_000);
});
