import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";
import { onPostgres } from "../helpers/backend.ts";
import { readBlob } from "../helpers/blobs.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";
import { runGengate, tempDir } from "../helpers/server.ts";

// `gengate serve` on SQLite with its files in an S3 bucket (storage_url = s3://...): uploads, a
// sandbox job's outputs and their downloads (with Range) go to and come from the bucket; the data
// dir holds none of the bytes.

let s3: TestS3;
let s: Awaited<ReturnType<typeof startFunded>>;
let bucket: S3BlobBackend;
beforeAll(async () => {
  s3 = await startS3();
  const { env, toml, prefix } = s3.serveEnv();
  s = await startFunded(`${toml}[limits]\nupload_max_bytes = 60000000\n`, "100", env);
  bucket = s3.store({ prefix });
});
afterAll(async () => {
  s?.cleanup();
  await s3?.stop();
});

async function keys(prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of bucket.list(prefix)) out.push(o.key);
  return out.sort();
}
const localFiles = () => readdirSync(join(s.dataDir, "files"), { recursive: true }) as string[];
/** The server's resident memory (Linux /proc), in bytes. */
const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

describe("serve with storage_url = s3://", () => {
  test("an upload lands in the bucket, reads back, and is deleted from it", async () => {
    const png = encodePng(40, 30, 3);
    const res = await s.fetch("/v1/files", {
      method: "POST",
      body: png,
      headers: { "content-type": "image/png" },
    });
    expect(res.status).toBe(201);
    const f = (await res.json()) as { file_id: string };
    expect(await keys("uploads/")).toContain(`uploads/${f.file_id}`);
    expect(Buffer.from(await readBlob(bucket, `uploads/${f.file_id}`)).equals(Buffer.from(png))).toBe(true);
    const content = await s.fetch(`/v1/files/${f.file_id}/content`);
    expect(Buffer.from(await content.arrayBuffer()).equals(Buffer.from(png))).toBe(true);
    expect((await s.fetch(`/v1/files/${f.file_id}`, { method: "DELETE" })).status).toBe(200);
    expect(await keys("uploads/")).not.toContain(`uploads/${f.file_id}`);
    expect(localFiles().filter((n) => !n.startsWith("."))).toEqual([]);
  });

  test("an uploaded file id works as a job input (its row and size; the output lands in the bucket)", async () => {
    const up = await s.fetch("/v1/files", {
      method: "POST",
      body: encodePng(64, 64, 1),
      headers: { "content-type": "image/png" },
    });
    const f = (await up.json()) as { file_id: string };
    const run = await s.post("/v1/run/sandbox/avatar", {
      image_url: f.file_id,
      text: "hello there",
      duration: 2,
    });
    expect(run.status).toBe(200);
    const out = (await run.json()) as { video: { url: string } };
    const id = /requests\/([^/]+)\/output/.exec(out.video.url)![1]!;
    expect(await keys(`outputs/${id}/`)).toEqual([`outputs/${id}/0`]);
  });

  test("a sandbox job's outputs are stored in the bucket and download with Range", async () => {
    const run = await s.post("/v1/run/sandbox/image", {
      prompt: "a cat",
      num_images: 2,
      width: 96,
      height: 64,
    });
    expect(run.status).toBe(200);
    const out = (await run.json()) as { images: { url: string; content_type: string }[] };
    expect(out.images.length).toBe(2);
    const id = /requests\/([^/]+)\/output/.exec(out.images[0]!.url)![1]!;
    expect(await keys(`outputs/${id}/`)).toEqual([`outputs/${id}/0`, `outputs/${id}/1`]);
    const stored = await readBlob(bucket, `outputs/${id}/0`);
    const link = out.images[0]!.url.slice(s.url.length);
    const whole = await s.fetch(link, { key: null });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await whole.arrayBuffer()).equals(Buffer.from(stored))).toBe(true);
    const part = await s.fetch(link, { key: null, headers: { range: "bytes=10-29" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-29/${stored.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(Buffer.from(stored.subarray(10, 30)))).toBe(true);
    const tail = await s.fetch(link, { key: null, headers: { range: `bytes=${stored.length}-` } });
    expect(tail.status).toBe(416);
    expect(localFiles().filter((n) => !n.startsWith("."))).toEqual([]);
  });

  test("a 50 MB file uploads and downloads whole; the server's memory grows far less than the file", async () => {
    const size = 50 * 1024 * 1024;
    const body = new Uint8Array(size);
    body.set(encodePng(8, 8, 1));
    for (let i = 4096; i < size; i += 4096) body[i] = i & 255;
    const digest = createHash("sha256").update(body).digest("hex");
    const up = await s.fetch("/v1/files", { method: "POST", body, headers: { "content-type": "image/png" } });
    expect(up.status).toBe(201);
    const f = (await up.json()) as { file_id: string; sha256: string };
    expect(f.sha256).toBe(digest);
    const base = rssOf(s.proc.pid);
    let peak = base;
    const res = await s.fetch(`/v1/files/${f.file_id}/content`);
    expect(res.status).toBe(200);
    // No Content-Length on the wire: Bun 1.4.5 drops it for a streamed body (oven-sh/bun#10507),
    // so the download is chunked; its length and digest are checked below.
    const hash = createHash("sha256");
    let n = 0;
    for await (const chunk of res.body!) {
      hash.update(chunk);
      n += chunk.byteLength;
      if ((n & 0x3fffff) < chunk.byteLength) peak = Math.max(peak, rssOf(s.proc.pid));
    }
    expect(n).toBe(size);
    expect(hash.digest("hex")).toBe(digest);
    // Generous: a server that buffered the download would grow by the file's 50 MB at least.
    expect(peak - base).toBeLessThan(35 * 1024 * 1024);
  });

  test("/readyz reports the spool's free space; the data dir holds the database, not the files", async () => {
    const ready = await s.fetch("/readyz", { key: null });
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { storage: { free_bytes: number; accepting_uploads: boolean } };
    expect(body.storage.free_bytes).toBeGreaterThan(0);
    expect(body.storage.accepting_uploads).toBe(true);
    // The SQLite file, unless the server runs on PostgreSQL (GENGATE_TEST_BACKEND=postgres).
    if (!onPostgres) expect(readdirSync(s.dataDir).sort()).toContain("gengate.db");
  });

  test("s3:// without credentials is refused at start with a clear config error", async () => {
    const { toml } = s3.serveEnv();
    const dir = tempDir();
    const config = join(dir, "gengate.toml");
    await Bun.write(config, toml);
    const r = await runGengate(
      ["serve", "--port", "0", "--data-dir", join(dir, "data"), "--config", config],
      {
        GENGATE_STORAGE_URL: "s3://gengate-test/x",
        AWS_ACCESS_KEY_ID: "",
        AWS_SECRET_ACCESS_KEY: "",
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("AWS_ACCESS_KEY_ID");
    rmSync(dir, { recursive: true, force: true });
  });
});
