import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";
import { BACKUP_IS_SQLITE, onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";

type Json = Record<string, any>;
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const sha = (b: ArrayBuffer | Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

const ROUND_TRIP = sqliteOnly(
  "backup and restore round trip (server running during the backup)",
  BACKUP_IS_SQLITE,
);
describe.skipIf(onPostgres)(ROUND_TRIP, () => {
  test("jobs, files, outputs, secrets, keys and links issued before the backup survive", async () => {
    const s = await startFunded();
    cleanups.push(() => s.cleanup());
    const dd = ["--data-dir", s.dataDir];

    // A second key made by the operator CLI, and the admin token.
    const k = await runGengate(["key", "create", "--account", "x", ...dd, "--json"]);
    expect(k.code).not.toBe(0); // unknown account: proves the CLI talks to this dir
    const account = (await (await s.get("/v1/account")).json()) as Json;
    const made = await runGengate([
      "key",
      "create",
      "--account",
      account.id,
      "--name",
      "ci",
      "--json",
      ...dd,
    ]);
    expect(made.code).toBe(0);
    const secondKey = JSON.parse(made.stdout).key as string;
    const whsec = ((await (await s.get("/v1/account/webhook-secret")).json()) as Json).secret;

    // Uploads, and jobs with outputs (one of them reading an upload).
    const uploads: { id: string; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 3; i++) {
      const bytes = encodePng(32 + i, 24, i);
      const r = (await (
        await s.fetch("/v1/files", { method: "POST", body: bytes, headers: { "content-type": "image/png" } })
      ).json()) as Json;
      uploads.push({ id: r.file_id, bytes });
    }
    const links: { url: string; sha: string }[] = [];
    const jobs: string[] = [];
    for (const [model, input] of [
      ["sandbox/image", { prompt: "a cat", num_images: 2, width: 96, height: 64 }],
      ["sandbox/speech", { text: "hello there" }],
      ["sandbox/upscale", { image_url: uploads[0]!.id }],
    ] as const) {
      const res = await s.post(`/v1/run/${model}`, input);
      if (res.status !== 200) throw new Error(`${model}: ${res.status} ${await res.text()}`);
      const requestId = res.headers.get("x-fal-request-id") ?? "";
      const rec = (await (await s.get(`/v1/requests/${requestId}`)).json()) as Json;
      expect(rec.status).toBe("COMPLETED");
      jobs.push(requestId);
      for (const url of rec.output_urls as string[]) {
        const body = await (await fetch(url)).arrayBuffer();
        links.push({ url, sha: sha(body) });
      }
    }
    expect(links.length).toBe(4);
    const before = Object.fromEntries(
      await Promise.all(
        jobs.map(async (id) => {
          const rec = (await (await s.get(`/v1/requests/${id}`)).json()) as Json;
          return [id, { status: rec.status, price: rec.price }];
        }),
      ),
    );
    const balanceBefore = ((await (await s.get("/v1/account")).json()) as Json).balance_micro;

    // The backup runs while clients keep uploading.
    let writing = true;
    const load = (async () => {
      let n = 0;
      while (writing) {
        await s.fetch("/v1/files", {
          method: "POST",
          body: encodePng(16, 16, n++),
          headers: { "content-type": "image/png" },
        });
      }
      return n;
    })();
    const out = tempDir("gengate-backup-");
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const archive = join(out, "backup.tar.gz");
    const b = await runGengate(["backup", archive, ...dd, "--json"]);
    writing = false;
    expect(await load).toBeGreaterThan(0);
    expect(b.stderr).toBe("");
    expect(b.code).toBe(0);
    const summary = JSON.parse(b.stdout) as Json;
    expect(summary).toMatchObject({ backup: archive, gzip: true, dropped: [] });
    expect(summary.files).toBeGreaterThanOrEqual(3 + 4);
    expect(mode(archive)).toBe("600");
    expect(readdirSync(out)).toEqual(["backup.tar.gz"]); // no temp files left

    // Stock tar reads it.
    const listing = Bun.spawnSync(["tar", "tzf", archive]).stdout.toString().split("\n");
    expect(listing).toContain("manifest.json");
    expect(listing).toContain("gengate.db");
    expect(listing).toContain("server.secret");
    expect(listing).toContain("admin.token");
    expect(listing).toContain(`files/uploads/${uploads[1]!.id}`);
    expect(listing).toContain(`files/outputs/${jobs[0]}/1`);
    const manifest = JSON.parse(Bun.spawnSync(["tar", "xzOf", archive, "manifest.json"]).stdout.toString());
    expect(manifest).toMatchObject({ format: "gengate-backup", format_version: 1 });
    expect(manifest.schema_version).toBeGreaterThan(0);

    expect(await s.stop()).toBe(0);

    // Restore into a new dir and start a server on it.
    const restored = join(tempDir("gengate-restore-"), "data");
    cleanups.push(() => rmSync(restored, { recursive: true, force: true }));
    const r = await runGengate(["restore", archive, "--data-dir", restored, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ data_dir: restored, files: summary.files });
    expect(mode(restored)).toBe("700");
    expect(mode(join(restored, "files"))).toBe("700");
    for (const f of ["server.secret", "admin.token", "gengate.db"])
      expect(mode(join(restored, f))).toBe("600");
    expect(readFileSync(join(restored, "server.secret"), "utf8")).toBe(
      readFileSync(join(s.dataDir, "server.secret"), "utf8"),
    );

    const s2: TestServer = await startServer({ dataDir: restored });
    cleanups.push(() => s2.cleanup());
    expect(s2.defaultKey).toBeNull(); // not a first start
    const get = (path: string, key: string | null = s.defaultKey) => s2.fetch(path, { key });

    expect(((await (await get("/v1/account")).json()) as Json).balance_micro).toBe(balanceBefore);
    expect((await get("/v1/account", secondKey)).status).toBe(200);
    expect(((await (await get("/v1/account/webhook-secret")).json()) as Json).secret).toBe(whsec);
    const admin = await fetch(`${s2.url}/admin/v1/accounts`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(admin.status).toBe(200);
    for (const id of jobs) {
      const rec = (await (await get(`/v1/requests/${id}`)).json()) as Json;
      expect({ status: rec.status, price: rec.price }).toEqual(before[id]);
    }
    // Links signed before the backup, by the old server, still work (same server.secret).
    for (const link of links) {
      const u = new URL(link.url);
      const res = await fetch(`${s2.url}${u.pathname}${u.search}`);
      expect(res.status).toBe(200);
      expect(sha(await res.arrayBuffer())).toBe(link.sha);
    }
    for (const up of uploads) {
      const res = await get(`/v1/files/${up.id}/content`);
      expect(res.status).toBe(200);
      expect(sha(await res.arrayBuffer())).toBe(sha(up.bytes));
    }
    // An upload can still be used as a job input.
    const again = await s2.fetch("/v1/run/sandbox/upscale", {
      key: s.defaultKey,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ image_url: uploads[2]!.id }),
    });
    expect(again.status).toBe(200);
    expect(s2.stderr()).toBe("");
  }, 120_000);
});
