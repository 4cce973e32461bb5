import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TarWriter } from "../../src/lib/tar.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";
import { BACKUP_IS_SQLITE, onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { runGengate, tempDir } from "../helpers/server.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
let work: string;
let archive: string;
const uploads: string[] = [];

beforeAll(async () => {
  if (onPostgres) return;
  s = await startFunded();
  work = tempDir("gengate-backup-errors-");
  for (let i = 0; i < 2; i++) {
    const r = await s.fetch("/v1/files", {
      method: "POST",
      body: encodePng(20, 20, i),
      headers: { "content-type": "image/png" },
    });
    uploads.push(((await r.json()) as { file_id: string }).file_id);
  }
  archive = join(work, "good.tar");
  const b = await runGengate(["backup", archive, "--data-dir", s.dataDir]);
  expect(b.code).toBe(0);
  expect(b.stdout).toMatch(/^backup written to .*good\.tar: 2 files/);
});
afterAll(() => {
  if (onPostgres) return;
  s.cleanup();
  rmSync(work, { recursive: true, force: true });
});

const fresh = (name: string) => join(work, name, "data");
async function restoreFails(file: string, pattern: RegExp) {
  const target = fresh(`t-${Math.random().toString(36).slice(2)}`);
  const r = await runGengate(["restore", file, "--data-dir", target]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr.trim().split("\n").length).toBe(1); // one line
  expect(existsSync(target)).toBe(false); // everything written is removed again
}

/** Writes an archive with the given entries (names and contents) through the project's writer. */
async function tarOf(name: string, entries: [string, Uint8Array][]): Promise<string> {
  const chunks: Uint8Array[] = [];
  const w = new TarWriter((c) => {
    chunks.push(c.slice());
  });
  for (const [n, body] of entries) await w.file({ name: n, size: body.length, mode: 0o600, mtime: 0 }, body);
  await w.finish();
  const path = join(work, name);
  writeFileSync(path, Buffer.concat(chunks));
  return path;
}

describe.skipIf(onPostgres)(sqliteOnly("restore refuses", BACKUP_IS_SQLITE), () => {
  test("a data dir that is not empty, with one line, touching nothing", async () => {
    const target = join(work, "busy");
    mkdirSync(target);
    writeFileSync(join(target, "keep.txt"), "mine");
    const r = await runGengate(["restore", archive, "--data-dir", target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `gengate: data dir ${target} is not empty; restore needs an empty or new directory\n`,
    );
    expect(readdirSync(target)).toEqual(["keep.txt"]);
  });

  test("an archive whose file bytes were altered", async () => {
    const bytes = readFileSync(archive);
    const at = bytes.indexOf(Buffer.from(`files/uploads/${uploads[0]}`));
    expect(at).toBeGreaterThanOrEqual(0);
    bytes[at + 512 + 40]! ^= 0xff;
    const bad = join(work, "altered.tar");
    writeFileSync(bad, bytes);
    await restoreFails(bad, /SHA-256 differs from the manifest/);
  });

  test("a truncated archive", async () => {
    const bytes = readFileSync(archive);
    const bad = join(work, "truncated.tar");
    writeFileSync(bad, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await restoreFails(bad, /damaged archive: .*truncated/);
  });

  test("entries outside the data dir's layout (path traversal)", async () => {
    const evil = await tarOf("evil.tar", [["../escaped.txt", Buffer.from("x")]]);
    await restoreFails(evil, /unexpected entry \.\.\/escaped\.txt/);
    expect(existsSync(join(work, "escaped.txt"))).toBe(false);
    const abs = await tarOf("abs.tar", [["/tmp/gengate-abs.txt", Buffer.from("x")]]);
    await restoreFails(abs, /unexpected entry/);
  });

  test("an archive without a manifest, and one whose manifest omits an entry", async () => {
    const secret = Buffer.from("abc\n");
    await restoreFails(await tarOf("nomanifest.tar", [["server.secret", secret]]), /no manifest\.json/);
    const manifest = Buffer.from(
      JSON.stringify({
        format: "gengate-backup",
        format_version: 1,
        schema_version: 1,
        entries: [],
        dropped: [],
      }),
    );
    await restoreFails(
      await tarOf("unlisted.tar", [
        ["server.secret", secret],
        ["manifest.json", manifest],
      ]),
      /server\.secret is in the archive but not in its manifest/,
    );
  });

  test("a bare SQLite file (an old-style backup) and a file that is no archive", async () => {
    const db = join(work, "old.db");
    new Database(db).close();
    writeFileSync(db, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(600)]));
    await restoreFails(db, /bare SQLite database/);
    const junk = join(work, "junk.bin");
    writeFileSync(junk, "hello");
    await restoreFails(junk, /not a gengate backup/);
    await restoreFails(join(work, "nope.tar"), /no backup archive at/);
  });
});

describe.skipIf(onPostgres)(sqliteOnly("backup", BACKUP_IS_SQLITE), () => {
  test("refuses an existing target", async () => {
    const r = await runGengate(["backup", archive, "--data-dir", s.dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`gengate: backup target ${archive} already exists\n`);
  });

  test("a referenced file missing on disk: warned, left out, its row marked deleted in the archive", async () => {
    rmSync(join(s.dataDir, "files", "uploads", uploads[1]!));
    const target = join(work, "partial.tar");
    const b = await runGengate(["backup", target, "--data-dir", s.dataDir, "--json"]);
    expect(b.code).toBe(0);
    expect(b.stderr).toMatch(`files/uploads/${uploads[1]} is missing in the data dir`);
    expect(JSON.parse(b.stdout).dropped).toEqual([
      { path: `files/uploads/${uploads[1]}`, kind: "upload", reason: "missing" },
    ]);
    const dir = fresh("partial");
    const r = await runGengate(["restore", target, "--data-dir", dir]);
    expect(r.code).toBe(0);
    const db = new Database(join(dir, "gengate.db"), { readonly: true });
    const rows = db.query("SELECT id, deleted_at IS NOT NULL AS gone FROM files ORDER BY id").all();
    db.close();
    expect(rows).toEqual(
      [
        { id: uploads[0], gone: 0 },
        { id: uploads[1], gone: 1 },
      ].sort((a, b) => (a.id! < b.id! ? -1 : 1)),
    );
    expect(existsSync(join(dir, "files", "uploads", uploads[0]!))).toBe(true);
  });
});
