import { DomainError } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import type { BlobBackend, BlobBody } from "./blob-backend.ts";

/** Stored bytes whose presence and size were checked: a response body, whole or one range. */
export interface CheckedBlob {
  body(range?: { start: number; end: number }): BlobBody;
}

/**
 * The bytes of a stored upload or output, checked before the response is built: a body (a Bun.file
 * or an S3 stream) is opened only after the handler has returned, so a missing object would
 * otherwise fail outside the app (a plain-text 500 that the access log records as 200). A row
 * whose bytes are gone or of another size is the operator's problem (a partial restore, a
 * hand-deleted file): logged as an error and answered 500 internal_error in the contract's shape.
 * A store that cannot be reached is 503 capacity_unavailable (BlobBackendUnavailable, from `size`).
 * `requestId` (the route's `requestMeta(request)?.id`) ties the log line to the access log.
 */
export async function storedFile(
  requestId: string | undefined,
  blobs: BlobBackend,
  key: string,
  expectedSize: number,
  what: Record<string, unknown>,
): Promise<CheckedBlob> {
  const size = await blobs.size(key);
  if (size !== expectedSize) {
    log("error", "stored file missing or damaged", {
      id: requestId,
      ...what,
      store: blobs.location,
      path: key,
      expected_size: expectedSize,
      actual_size: size,
    });
    throw new DomainError(
      "internal_error",
      "The stored bytes of this file are missing on the server; the operator has been alerted.",
    );
  }
  return { body: (range) => blobs.body(key, range) };
}
