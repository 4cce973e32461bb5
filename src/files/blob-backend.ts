import { DomainError } from "../lib/errors.ts";
import { errorFields, log } from "../lib/log.ts";

/**
 * The one port every stored byte goes through: uploads, job outputs, downloads (with Range), the
 * retention sweep and backups. Two implementations: a local directory (`blob-backend-local.ts`, the
 * default, <data dir>/files) and an S3-compatible bucket (`blob-backend-s3.ts`), chosen at start from
 * `storage_url` (docs/scale-out.md, "Files").
 *
 * Keys are the relative paths the metadata rows already hold (`files.path`, `job_outputs.path`):
 * `uploads/<file id>` and `outputs/<job id>/<index>`. Stored bytes are immutable: a key is written
 * once, complete (a temp file renamed locally; one PUT or a completed multipart upload on S3), and
 * only then does a row point at it, so a reader never sees a partial object under its key.
 */
export interface BlobBackend {
  readonly kind: "file" | "s3";
  /** Where the bytes are, for logs and health: `file:/abs/dir` or `s3://bucket/prefix`. */
  readonly location: string;
  /**
   * A local directory for bytes on their way in (an upload being checked, an upstream output being
   * fetched); its free space is what `[files] min_free_mb` guards.
   */
  readonly spoolDir: string;
  /** A fresh local path to write `key`'s bytes to before `commit` (locally beside the final name). */
  tempPath(key: string): string;
  /**
   * Makes a complete temp file visible under `key` (locally a rename; on S3 an upload, multipart
   * when large). The temp file is gone afterwards, also when this throws.
   */
  commit(tempPath: string, key: string, contentType: string): Promise<void>;
  /** Stores bytes held in memory under `key`, atomically. */
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The stored size, or null when nothing is stored under `key`. */
  size(key: string): Promise<number | null>;
  /**
   * A response body streaming the bytes, all or the inclusive range [start, end]; never the whole
   * object in memory. Call after `size` said the object is there.
   */
  body(key: string, range?: { start: number; end: number }): BlobBody;
  /** Up to `length` bytes from `offset` (fewer at the end), read into memory: for small regions. */
  read(key: string, offset: number, length: number): Promise<Uint8Array>;
  /** The bytes as a stream of chunks (backups; copies). */
  stream(key: string): AsyncIterable<Uint8Array>;
  /** Removes the keys; absent keys are not an error. */
  delete(keys: readonly string[]): Promise<void>;
  /** Removes every key under a prefix ending in "/" (a job's outputs). */
  deletePrefix(prefix: string): Promise<void>;
  /** Every stored key under a prefix, with its size (in no promised order). */
  list(prefix: string): AsyncIterable<{ key: string; size: number }>;
}

/** What `body` gives a Response: a file slice (sent by Bun from the file) or a stream. */
export type BlobBody = Blob | ReadableStream<Uint8Array>;

/**
 * The store cannot be reached (S3 down, refused, timing out): the caller gets the contract's 503
 * `capacity_unavailable` with Retry-After, never a 500 or a hang; the cause is logged once here.
 */
export class BlobBackendUnavailable extends DomainError {
  constructor(operation: string, location: string, cause: unknown) {
    super("capacity_unavailable", "The file store cannot be reached right now; retry shortly.", {
      retryAfterSeconds: 5,
    });
    log("error", "file store unreachable", { operation, store: location, ...errorFields(cause) });
  }
}

/** A key as the rows hold it: relative, "/"-separated, no empty, "." or ".." segment. */
const KEY = /^(?!\/)(?!.*\/\/)(?!.*(^|\/)\.\.?(\/|$))[0-9A-Za-z._/-]{1,512}$/;

/** Refuses a key that could leave the store's root (a bug, never client input: keys come from rows). */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}

/** The key of an upload's bytes. */
export const uploadKey = (fileId: string) => `uploads/${fileId}`;
/** The key of a job output's bytes. */
export const outputKey = (jobId: string, idx: number) => `outputs/${jobId}/${idx}`;
/** The prefix of all of one job's outputs. */
export const outputPrefix = (jobId: string) => `outputs/${jobId}/`;
