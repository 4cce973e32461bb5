import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import type { BlobBackend } from "../../src/files/blob-backend.ts";
import { readBlob } from "../helpers/blobs.ts";
import { storesUnderTest } from "../helpers/s3.ts";

const stores = storesUnderTest();

const bytesOf = (n: number, seed = 1) => new Uint8Array(n).map((_, i) => (i * 31 + seed) & 255);
const text = async (body: Blob | ReadableStream<Uint8Array>) =>
  new Uint8Array(await new Response(body).arrayBuffer());
const keysUnder = async (b: BlobBackend, prefix: string) => {
  const out: string[] = [];
  for await (const o of b.list(prefix)) out.push(`${o.key}:${o.size}`);
  return out.sort();
};

describe.each(stores)("blob store: %s", (_name, make) => {
  test("put, size, read, body (whole and ranged), stream", async () => {
    const b = make();
    const data = bytesOf(10_000);
    await b.put("outputs/job-1/0", data, "image/png");
    expect(await b.size("outputs/job-1/0")).toBe(10_000);
    expect(await b.read("outputs/job-1/0", 100, 50)).toEqual(data.subarray(100, 150));
    expect(await b.read("outputs/job-1/0", 9_990, 50)).toEqual(data.subarray(9_990));
    expect(await text(b.body("outputs/job-1/0"))).toEqual(data);
    expect(await text(b.body("outputs/job-1/0", { start: 0, end: 0 }))).toEqual(data.subarray(0, 1));
    expect(await text(b.body("outputs/job-1/0", { start: 5000, end: 9999 }))).toEqual(data.subarray(5000));
    expect(await readBlob(b, "outputs/job-1/0")).toEqual(data);
  });

  test("absent keys: size null; delete of an absent key is fine", async () => {
    const b = make();
    expect(await b.size("uploads/file_nothing")).toBeNull();
    await b.delete(["uploads/file_nothing"]);
    expect(await keysUnder(b, "uploads/")).toEqual([]);
  });

  test("list by prefix, delete, deletePrefix", async () => {
    const b = make();
    await b.put("outputs/job-a/0", bytesOf(3), "image/png");
    await b.put("outputs/job-a/1", bytesOf(4), "image/png");
    await b.put("outputs/job-b/0", bytesOf(5), "image/png");
    await b.put("uploads/file_x", bytesOf(6), "image/png");
    expect(await keysUnder(b, "outputs/")).toEqual([
      "outputs/job-a/0:3",
      "outputs/job-a/1:4",
      "outputs/job-b/0:5",
    ]);
    expect(await keysUnder(b, "outputs/job-a/")).toEqual(["outputs/job-a/0:3", "outputs/job-a/1:4"]);
    await b.deletePrefix("outputs/job-a/");
    expect(await keysUnder(b, "outputs/")).toEqual(["outputs/job-b/0:5"]);
    await b.delete(["uploads/file_x", "outputs/job-b/0"]);
    expect(await b.size("uploads/file_x")).toBeNull();
    expect(await keysUnder(b, "")).toEqual([]);
  });

  test("atomic visibility: a temp file is not under its key until committed, and is gone after", async () => {
    const b = make();
    const tmp = b.tempPath("uploads/file_atomic");
    writeFileSync(tmp, bytesOf(2048));
    expect(await b.size("uploads/file_atomic")).toBeNull();
    expect(await keysUnder(b, "uploads/")).toEqual([]);
    await b.commit(tmp, "uploads/file_atomic", "image/png");
    expect(existsSync(tmp)).toBe(false);
    expect(await b.size("uploads/file_atomic")).toBe(2048);
    expect(await keysUnder(b, "uploads/")).toEqual(["uploads/file_atomic:2048"]);
  });

  test("a large object (12 MiB, a multipart upload on S3) round-trips", async () => {
    const b = make();
    const data = bytesOf(12 * 1024 * 1024, 7);
    const tmp = b.tempPath("outputs/job-big/0");
    writeFileSync(tmp, data);
    await b.commit(tmp, "outputs/job-big/0", "video/mp4");
    expect(await b.size("outputs/job-big/0")).toBe(data.length);
    const back = await readBlob(b, "outputs/job-big/0");
    expect(back.length).toBe(data.length);
    expect(Buffer.compare(back, data)).toBe(0);
    const tail = await text(b.body("outputs/job-big/0", { start: data.length - 10, end: data.length - 1 }));
    expect(tail).toEqual(data.subarray(data.length - 10));
  });

  test("a put of 64 MiB lets the event loop turn (issue 31: no request waits behind a write)", async () => {
    const b = make();
    const data = new Uint8Array(64 * 1024 * 1024).fill(9);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await b.put("outputs/job-big/0", data, "application/octet-stream");
    } finally {
      clearInterval(timer);
    }
    // Written synchronously (writeFileSync, 80+ ms for 64 MiB), no timer could fire meanwhile.
    expect(ticks).toBeGreaterThan(0);
    expect(await b.size("outputs/job-big/0")).toBe(data.length);
  });

  test("keys that could leave the store are refused", async () => {
    const b = make();
    for (const key of ["../x", "uploads/../../x", "/etc/passwd", "uploads//x", "uploads/./x", ""]) {
      expect(() => b.tempPath(key)).toThrow(/invalid blob key/);
      await expect(b.put(key, bytesOf(1), "image/png")).rejects.toThrow(/invalid blob key/);
    }
  });

  test("the spool directory holds nothing after commits", async () => {
    const b = make();
    for (let i = 0; i < 3; i++) {
      const tmp = b.tempPath(`uploads/file_s${i}`);
      writeFileSync(tmp, bytesOf(10));
      await b.commit(tmp, `uploads/file_s${i}`, "image/png");
    }
    const all = readdirSync(b.spoolDir, { recursive: true }) as string[];
    expect(all.filter((f) => f.endsWith(".part"))).toEqual([]);
  });
});
