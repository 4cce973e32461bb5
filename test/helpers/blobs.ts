import type { BlobBackend } from "../../src/files/blob-backend.ts";

/** All the bytes stored under a key (tests: outputs and uploads are small there). */
export async function readBlob(blobs: BlobBackend, key: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of blobs.stream(key)) parts.push(c);
  return new Uint8Array(Buffer.concat(parts));
}
