import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { S3Client } from "bun";
import type { StorageSettings } from "../config/schema.ts";
import { type BlobBackend, BlobBackendUnavailable, type BlobBody, checkKey } from "./blob-backend.ts";

export type S3BlobSettings = Extract<StorageSettings, { kind: "s3" }>;

/** A metadata call (HEAD, DELETE, LIST, a small GET) that takes longer is treated as unreachable. */
const CALL_TIMEOUT_MS = 15_000;
/**
 * Multipart uploads: parts of 5 MiB (S3's minimum; 10,000 parts cover 48 GiB), 2 in flight. Bun
 * holds about partSize x queueSize x 5 in memory during an upload whatever the file's size
 * (measured with a 600 MB file: +53 MB RSS at 5 MiB x 2, +111 MB at 8 MiB x 4, same speed).
 */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;
const DELETE_CONCURRENCY = 8;
/** Error codes S3 documents as worth a retry. */
const RETRYABLE = new Set(["InternalError", "SlowDown", "ServiceUnavailable", "RequestTimeout"]);

/**
 * The blob backend in an S3-compatible bucket, over Bun's built-in `Bun.S3Client` (SigV4 signing,
 * multipart uploads, ranged GETs; no SDK). Bytes on their way in are spooled to a local directory
 * first and uploaded only once gengate's checks passed, so an object exists under its key only when
 * complete and accepted (`commit`). Downloads stream a ranged GET straight into the response
 * (`body`): never the whole object in memory, and never a redirect to the bucket (the bucket stays
 * private; gengate's links and download cap stay the only way in). A failure to reach the bucket is
 * `BlobBackendUnavailable` (503 `capacity_unavailable`).
 */
export class S3BlobBackend implements BlobBackend {
  readonly kind = "s3" as const;
  readonly location: string;
  readonly spoolDir: string;
  private readonly client: S3Client;
  private readonly timeoutMs: number;

  constructor(
    readonly settings: S3BlobSettings,
    spoolDir: string,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS;
    this.location = `s3://${settings.bucket}/${settings.prefix}`;
    this.spoolDir = resolve(spoolDir);
    this.client = new S3Client({
      bucket: settings.bucket,
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      virtualHostedStyle: !settings.pathStyle,
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      retry: 2,
    });
  }

  private k(key: string): string {
    return this.settings.prefix + checkKey(key);
  }

  /**
   * One call to the bucket with a time limit; an error S3 says to retry (InternalError, SlowDown,
   * 503) is retried twice for idempotent calls. Anything else that fails is BlobBackendUnavailable.
   */
  private async call<T>(
    operation: string,
    fn: () => Promise<T>,
    timeoutMs = this.timeoutMs,
    idempotent = operation !== "put",
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        return await Promise.race([
          fn(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
      } catch (err) {
        if (idempotent && attempt < 2 && RETRYABLE.has((err as { code?: string }).code ?? "")) {
          await Bun.sleep(50 * 4 ** attempt);
          continue;
        }
        throw new BlobBackendUnavailable(operation, this.location, describe(err));
      } finally {
        clearTimeout(timer);
      }
    }
  }

  tempPath(key: string): string {
    mkdirSync(this.spoolDir, { recursive: true, mode: 0o700 });
    const name = checkKey(key).replaceAll("/", "_");
    return join(this.spoolDir, `.${name}.${randomBytes(6).toString("hex")}.part`);
  }

  async commit(tempPath: string, key: string, contentType: string): Promise<void> {
    try {
      const k = this.k(key);
      // A time limit that grows with the size (a minute, plus a second per MiB): a large upload
      // takes what it takes, a bucket that stopped answering does not hold the request forever.
      const limit = this.timeoutMs * 4 + Math.ceil(statSync(tempPath).size / 1024);
      await this.call("put", () => this.client.write(k, Bun.file(tempPath), { type: contentType }), limit);
    } finally {
      rmSync(tempPath, { force: true });
    }
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    const k = this.k(key);
    await this.call("put", () => this.client.write(k, bytes, { type: contentType }), 10 * this.timeoutMs);
  }

  async size(key: string): Promise<number | null> {
    const k = this.k(key);
    return this.call("stat", async () => {
      try {
        return await this.client.size(k);
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    });
  }

  body(key: string, range?: { start: number; end: number }): BlobBody {
    // `new Response(s3file)` would answer a redirect to a presigned bucket URL: stream instead.
    const file = this.client.file(this.k(key));
    if (!range) return file.stream();
    // A server that ignores a range answers the whole object (s3rver does for "bytes=0-0"): never
    // send more than the range's length (start is 0 in that case, so the bytes are the right ones).
    return take(file.slice(range.start, range.end + 1).stream(), range.end - range.start + 1);
  }

  async read(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const file = this.client.file(this.k(key));
    const bytes = await this.call(
      "read",
      async () => new Uint8Array(await file.slice(offset, offset + length).arrayBuffer()),
      10 * this.timeoutMs,
    );
    return bytes.length > length ? bytes.subarray(0, length) : bytes;
  }

  async *stream(key: string): AsyncIterable<Uint8Array> {
    try {
      for await (const chunk of this.client.file(this.k(key)).stream()) yield chunk;
    } catch (err) {
      throw new BlobBackendUnavailable("read", this.location, describe(err));
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        const k = this.k(key);
        await this.call("delete", () => this.client.delete(k));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, queue.length) }, worker));
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith("/")) throw new Error(`blob prefix ${prefix} must end in /`);
    const keys: string[] = [];
    for await (const o of this.list(prefix)) keys.push(o.key);
    await this.delete(keys);
  }

  async *list(prefix: string): AsyncIterable<{ key: string; size: number }> {
    let continuationToken: string | undefined;
    do {
      const page = await this.call("list", () =>
        this.client.list({ prefix: this.settings.prefix + prefix, maxKeys: 1000, continuationToken }),
      );
      for (const o of page.contents ?? []) {
        const key = o.key.slice(this.settings.prefix.length);
        yield { key, size: o.size ?? 0 };
      }
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
  }
}

/** The stream cut after `limit` bytes. */
function take(stream: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let left = limit;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (left <= 0) return;
        const part = chunk.byteLength > left ? chunk.subarray(0, left) : chunk;
        left -= part.byteLength;
        out.enqueue(part);
        if (left <= 0) out.terminate();
      },
    }),
  );
}

function isNotFound(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === "NoSuchKey" || code === "NotFound" || code === "ERR_S3_FILE_NOT_FOUND";
}

/** Bun's S3Error says only "an unexpected error has occurred": its code is the useful part. */
function describe(err: unknown): Error {
  const e = err as { code?: string; message?: string };
  return new Error(e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err));
}
