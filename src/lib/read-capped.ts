import { concatBytes } from "./bytes.ts";
import { DomainError } from "./errors.ts";

/** The error for a body past its size limit (payload_too_large). */
export function tooLarge(max: number): DomainError {
  return new DomainError("payload_too_large", `The body is larger than the limit of ${max} bytes.`);
}

/**
 * Reads a whole body into memory, refusing it past `max` bytes while streaming (the reader is
 * cancelled, so the peer stops sending). For bodies that are meant to be small: JSON requests,
 * images fetched for an upstream. Large media is streamed to disk instead.
 */
export async function readAllCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  tooBig: () => Error,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooBig();
    }
    parts.push(value);
  }
  return concatBytes(parts);
}
