import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageSettings } from "../../src/config/schema.ts";
import type { BlobBackend } from "../../src/files/blob-backend.ts";
import { LocalBlobBackend } from "../../src/files/blob-backend-local.ts";
import { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";

/** s3rver accepts only this key pair (and does not check SigV4 signatures: see test/files/sigv4.test.ts). */
export const S3_ACCESS_KEY = "S3RVER";
export const S3_SECRET_KEY = "S3RVER";
export const S3_BUCKET = "gengate-test";

export interface TestS3 {
  endpoint: string;
  port: number;
  /** Settings of a fresh prefix in the test bucket (each store its own keys). */
  settings(prefix?: string): Extract<StorageSettings, { kind: "s3" }>;
  /** A blob store on a fresh prefix (or the given one), spooling under a temp dir. */
  store(options?: { timeoutMs?: number; prefix?: string }): S3BlobBackend;
  /** Environment and config for `gengate serve` on a fresh prefix of this server. */
  serveEnv(): { env: Record<string, string>; toml: string; prefix: string };
  stop(): Promise<void>;
}

let counter = 0;

/**
 * Starts s3rver in its own process on 127.0.0.1 and a free port (call in beforeAll, stop in
 * afterAll); every settings/store/serveEnv call gets its own key prefix in the one test bucket.
 */
export async function startS3(): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), "gengate-s3-"));
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "s3-server.ts"), dir, S3_BUCKET], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, NODE_ENV: "test" },
  });
  const reader = proc.stdout.getReader();
  let text = "";
  const timer = setTimeout(() => proc.kill(), 20_000);
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the S3 test server did not start (exit ${await proc.exited})`);
    text += new TextDecoder().decode(value);
  }
  clearTimeout(timer);
  reader.releaseLock();
  const { port } = JSON.parse(text) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const spools = mkdtempSync(join(tmpdir(), "gengate-spool-"));
  const settings = (prefix = `t${process.pid}-${++counter}`) => ({
    kind: "s3" as const,
    bucket: S3_BUCKET,
    prefix: `${prefix}/`,
    endpoint,
    region: "us-east-1",
    pathStyle: true,
    accessKeyId: S3_ACCESS_KEY,
    secretAccessKey: S3_SECRET_KEY,
  });
  return {
    endpoint,
    port,
    settings,
    store: (options = {}) =>
      new S3BlobBackend(settings(options.prefix), join(spools, String(++counter)), options),
    serveEnv() {
      const prefix = `serve${process.pid}-${++counter}`;
      return {
        prefix,
        env: {
          GENGATE_STORAGE_URL: `s3://${S3_BUCKET}/${prefix}`,
          AWS_ACCESS_KEY_ID: S3_ACCESS_KEY,
          AWS_SECRET_ACCESS_KEY: S3_SECRET_KEY,
        },
        toml: `[storage.s3]\nendpoint = "${endpoint}"\nregion = "us-east-1"\npath_style = true\n`,
      };
    },
    async stop() {
      proc.stdin.end();
      const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)]);
      if (exited === null) proc.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      rmSync(spools, { recursive: true, force: true });
    },
  };
}

/**
 * The blob stores a suite runs the same cases on (`describe.each`): a fresh local directory and a
 * fresh prefix of an s3rver started for the file (hooks registered here, at the file's top level).
 */
export function storesUnderTest(): [string, () => BlobBackend][] {
  let s3: TestS3 | null = null;
  const dirs: string[] = [];
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await s3?.stop();
  });
  return [
    [
      "local directory",
      () => {
        const dir = mkdtempSync(join(tmpdir(), "gengate-blobs-"));
        dirs.push(dir);
        return new LocalBlobBackend(dir);
      },
    ],
    ["S3", () => s3!.store()],
  ];
}
