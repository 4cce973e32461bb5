import { sha256Hex } from "../lib/hash.ts";
import type { Measured } from "../providers/measure.ts";
import { type BlobBackend, outputKey, outputPrefix } from "./blob-backend.ts";

export interface StoredOutput {
  idx: number;
  path: string;
  contentType: string;
  size: number;
  sha256: string;
  /** The file measured before it was stored (outputs fetched from an upstream's link). */
  measured?: Measured;
}

/**
 * Job outputs in the blob backend, under outputs/<job id>/<index>: each written whole (a temp name
 * renamed locally, one PUT on S3), so a crash never leaves a half-written output under its key.
 */
export class OutputWriter {
  constructor(readonly blobs: BlobBackend) {}

  async write(jobId: string, idx: number, bytes: Uint8Array, contentType: string): Promise<StoredOutput> {
    const key = outputKey(jobId, idx);
    // Hashed in slices (src/lib/hash.ts): an output of a gigabyte is 0.6 s of SHA-256.
    const sha256 = await sha256Hex(bytes);
    await this.blobs.put(key, bytes, contentType);
    return { idx, path: key, contentType, size: bytes.byteLength, sha256 };
  }

  /** Removes what a job stored (its outputs failed or the job ended otherwise meanwhile). */
  async removeJob(jobId: string): Promise<void> {
    await this.blobs.deletePrefix(outputPrefix(jobId));
  }
}
