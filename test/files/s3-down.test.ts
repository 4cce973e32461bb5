import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import type { Socket, TCPSocketListener } from "bun";
import { outputKey } from "../../src/files/blob-backend.ts";
import { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { json, logLines, makeTestApp } from "../helpers/context.ts";
import { completedJobWithOutput } from "../helpers/outputs.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

// When the bucket cannot be reached, the files API answers the contract's 503 capacity_unavailable with
// Retry-After, quickly, and nothing is left behind: never a 500, never a hang.

type Err = { error: { code: string; type: string } };
let s3: TestS3;
let silent: TCPSocketListener<undefined>;
const held: Socket<undefined>[] = [];
beforeAll(async () => {
  s3 = await startS3();
  // Accepts connections and never answers: a bucket endpoint that hangs.
  silent = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { open: (sock) => void held.push(sock), data() {} },
  });
});
afterAll(async () => {
  silent.stop(true);
  await s3.stop();
});

const spooled = (dir: string) =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".part"));

describe("the S3 store down", () => {
  test("stopped after the files were stored: downloads and uploads are 503 capacity_unavailable, deletes keep the row gone", async () => {
    const own = await startS3();
    const blobs = own.store();
    const t = await makeTestApp({ blobs });
    const { link } = await completedJobWithOutput(t, new Uint8Array(100).fill(1));
    const up = await t.request("/v1/files", {
      method: "POST",
      body: encodePng(4, 4, 1),
      headers: { "content-type": "image/png" },
    });
    const file = await json<{ file_id: string }>(up);
    await own.stop();

    for (const res of [
      await t.request(link(), { key: null }),
      await t.request(link(), { key: null, headers: { range: "bytes=0-9" } }),
      await t.request(`/v1/files/${file.file_id}/content`),
      await t.request("/v1/files", {
        method: "POST",
        body: encodePng(4, 4, 2),
        headers: { "content-type": "image/png" },
      }),
    ]) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect((await json<Err>(res)).error).toMatchObject({
        code: "capacity_unavailable",
        type: "upstream_error",
      });
    }
    expect(spooled(blobs.spoolDir)).toEqual([]);
    rmSync(dirname(blobs.spoolDir), { recursive: true, force: true }); // made again by the upload
    expect(logLines.some((l) => l.includes('"msg":"file store unreachable"'))).toBe(true);
    // A delete still removes the file (the row decides); its bytes stay behind, logged.
    expect((await t.request(`/v1/files/${file.file_id}`, { method: "DELETE" })).status).toBe(200);
    expect((await t.request(`/v1/files/${file.file_id}`)).status).toBe(404);
  });

  test("an endpoint that never answers: downloads and uploads are 503 after the call time limits, not a hang", async () => {
    const settings = { ...s3.settings(), endpoint: `http://127.0.0.1:${silent.port}` };
    const blobs = new S3BlobBackend(settings, s3.store().spoolDir, { timeoutMs: 300 });
    const t = await makeTestApp({ blobs });
    // The row exists; its bytes are asked of a bucket that does not answer.
    const id = Bun.randomUUIDv7();
    const stored = {
      idx: 0,
      path: outputKey(id, 0),
      contentType: "image/png",
      size: 10,
      sha256: "0".repeat(64),
    };
    const { link: hanging } = await completedJobWithOutput(t, { id, stored });
    const started = performance.now();
    const res = await t.request(hanging(), { key: null });
    expect(res.status).toBe(503);
    expect((await json<Err>(res)).error.code).toBe("capacity_unavailable");
    // An upload to it: refused with 503 once the put's time limit passes, nothing left spooled.
    const up = await t.request("/v1/files", {
      method: "POST",
      body: encodePng(4, 4, 3),
      headers: { "content-type": "image/png" },
    });
    expect(up.status).toBe(503);
    expect((await json<Err>(up)).error.code).toBe("capacity_unavailable");
    expect(spooled(blobs.spoolDir)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(20_000); // liveness only
  });
});
