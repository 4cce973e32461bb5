import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, openSync, readdirSync, writeSync } from "node:fs";
import { type BlobBackend, outputKey } from "../../src/files/blob-backend.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { readBlob } from "../helpers/blobs.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { completedJobWithOutput } from "../helpers/outputs.ts";
import { storesUnderTest } from "../helpers/s3.ts";

// The files API (uploads, their refusals, downloads with Range, deletes, retention) on each blob
// store: the same cases, through the in-process app, with the bytes in a local directory or S3.

const stores = storesUnderTest();

type Err = { error: { code: string } };

async function keys(b: BlobBackend, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of b.list(prefix)) out.push(o.key);
  return out;
}
const spooled = (b: BlobBackend) =>
  (readdirSync(b.spoolDir, { recursive: true }) as string[]).filter((f) => f.endsWith(".part"));

async function app(blobs: BlobBackend, uploadMaxBytes = 100_000) {
  const t = await makeTestApp({ blobs });
  t.ctx.live = { ...t.ctx.live, limits: { ...t.ctx.live.limits, uploadMaxBytes } };
  return t;
}

describe.each(stores)("files on the %s store", (_name, make) => {
  test("upload, read back, delete: the bytes live in the store under uploads/<id>", async () => {
    const blobs = make();
    const t = await app(blobs);
    const png = encodePng(40, 30, 7);
    const res = await t.request("/v1/files", {
      method: "POST",
      body: png,
      headers: { "content-type": "image/png" },
    });
    expect(res.status).toBe(201);
    const f = await json<{ file_id: string; size: number; width: number; sha256: string }>(res);
    expect(f).toMatchObject({ size: png.length, width: 40 });
    expect(await keys(blobs, "uploads/")).toEqual([`uploads/${f.file_id}`]);
    expect(Buffer.from(await readBlob(blobs, `uploads/${f.file_id}`)).equals(Buffer.from(png))).toBe(true);
    const content = await t.request(`/v1/files/${f.file_id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get("content-length")).toBe(String(png.length));
    expect(Buffer.from(await content.arrayBuffer()).equals(Buffer.from(png))).toBe(true);
    expect((await t.request(`/v1/files/${f.file_id}`, { method: "DELETE" })).status).toBe(200);
    expect(await keys(blobs, "uploads/")).toEqual([]);
    expect((await t.request(`/v1/files/${f.file_id}/content`)).status).toBe(404);
  });

  test("refused uploads (too large, wrong magic bytes, empty) leave nothing in the store or the spool", async () => {
    const blobs = make();
    const t = await app(blobs, 5000);
    const cases: [Uint8Array, string, number, string][] = [
      [new Uint8Array(6000), "image/png", 413, "payload_too_large"],
      [encodePng(8, 8, 1), "audio/wav", 415, "unsupported_media_type"],
      [new Uint8Array(0), "image/png", 400, "validation_error"],
    ];
    for (const [body, type, status, code] of cases) {
      const res = await t.request("/v1/files", { method: "POST", body, headers: { "content-type": type } });
      expect(res.status).toBe(status);
      expect((await json<Err>(res)).error.code).toBe(code);
    }
    // Larger than the limit without a Content-Length: refused while streaming.
    const big = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encodePng(8, 8, 1));
        for (let i = 0; i < 10; i++) c.enqueue(new Uint8Array(1000));
        c.close();
      },
    });
    const res = await t.request("/v1/files", {
      method: "POST",
      body: big,
      headers: { "content-type": "image/png" },
    });
    expect(res.status).toBe(413);
    expect(await keys(blobs, "")).toEqual([]);
    expect(spooled(blobs)).toEqual([]);
  });

  test("output downloads: 200 whole, 206 ranges, 416 outside the file", async () => {
    const blobs = make();
    const t = await app(blobs);
    const bytes = new Uint8Array(5000).map((_, i) => (i * 7) % 251);
    const { id, link } = await completedJobWithOutput(t, bytes);
    expect(await keys(blobs, "outputs/")).toEqual([outputKey(id, 0)]);
    const whole = await t.request(link(), { key: null });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBe("5000");
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);
    for (const [range, start, end] of [
      ["bytes=0-0", 0, 0],
      ["bytes=0-99", 0, 99],
      ["bytes=4990-", 4990, 4999],
      ["bytes=-10", 4990, 4999],
      ["bytes=100-100000", 100, 4999],
    ] as const) {
      const res = await t.request(link(), { key: null, headers: { range } });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/5000`);
      expect(res.headers.get("content-length")).toBe(String(end - start + 1));
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.subarray(start, end + 1));
    }
    const outside = await t.request(link(), { key: null, headers: { range: "bytes=5000-" } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get("content-range")).toBe("bytes */5000");
    expect((await json<Err>(outside)).error.code).toBe("range_not_satisfiable");
  });

  test("retention removes expired uploads and outputs from the store", async () => {
    const blobs = make();
    const t = await app(blobs);
    const { id } = await completedJobWithOutput(t, new Uint8Array(100).fill(3));
    const up = await t.request("/v1/files", {
      method: "POST",
      body: encodePng(4, 4, 2),
      headers: { "content-type": "image/png" },
    });
    expect(up.status).toBe(201);
    expect((await keys(blobs, "")).length).toBe(2);
    expect(await t.ctx.files.sweep(Date.now() + 30 * 86400_000)).toEqual({ files: 1, outputs: 1 });
    expect(await keys(blobs, "")).toEqual([]);
    expect((await t.request(`/v1/requests/${id}/output/0`)).status).toBe(404);
  });

  test("a 50 MB output streams to the client: the process grows far less than the file", async () => {
    const blobs = make();
    const t = await app(blobs);
    // Written to the store from a temp file in 1 MiB pieces: the test never holds the 50 MB.
    const id = Bun.randomUUIDv7();
    const key = outputKey(id, 0);
    const tmp = blobs.tempPath(key);
    const fd = openSync(tmp, "w");
    const hash = createHash("sha256");
    const piece = new Uint8Array(1024 * 1024);
    for (let i = 0; i < 50; i++) {
      piece.fill(i);
      hash.update(piece);
      writeSync(fd, piece);
    }
    closeSync(fd);
    const size = 50 * 1024 * 1024;
    await blobs.commit(tmp, key, "video/mp4");
    const sha256 = hash.digest("hex");
    const { link } = await completedJobWithOutput(t, {
      id,
      stored: { idx: 0, path: key, contentType: "video/mp4", size, sha256 },
    });
    Bun.gc(true);
    const base = process.memoryUsage().rss;
    let peak = base;
    const res = await t.request(link(), { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(size));
    const got = createHash("sha256");
    let n = 0;
    for await (const chunk of res.body!) {
      got.update(chunk);
      n += chunk.byteLength;
      if ((n & 0x7fffff) < chunk.byteLength) {
        // Read chunks are garbage: collect them so what stays is what the server side holds.
        Bun.gc(false);
        peak = Math.max(peak, process.memoryUsage().rss);
      }
    }
    expect(n).toBe(size);
    expect(got.digest("hex")).toBe(sha256);
    // Generous: a buffered download would add at least the file's 50 MB.
    expect(peak - base).toBeLessThan(35 * 1024 * 1024);
  });
});
