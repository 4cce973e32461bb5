import { createHash } from "node:crypto";
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { log } from "../lib/log.ts";
import { contentTypeOf, normalizeContentType, SNIFF_BYTES } from "../lib/magic.ts";
import { measureFileAsync } from "../providers/measure.ts";
import { ProviderError } from "../providers/types.ts";
import { type BlobBackend, outputKey } from "./blob-backend.ts";
import type { StoredOutput } from "./output-writer.ts";

export const OUTPUT_MAX_BYTES = 2 * 1024 ** 3;
export const OUTPUT_FETCH_TIMEOUT_MS = 10 * 60_000;

/**
 * One message for every failed download, whatever the link answered: an upstream may hand back a
 * URL a client put in its input (a model that returns its input image), and repeating the status or
 * the network error would tell that client what answers where. The reason goes to the server's log.
 */
function notDownloaded(jobId: string, url: string, reason: string): ProviderError {
  let host = "";
  try {
    host = new URL(url).host;
  } catch {
    // reported as is
  }
  log("warn", "output download failed", { request_id: jobId, host, reason });
  return new ProviderError("failed", "The output could not be downloaded from the upstream.");
}

/**
 * Copies an upstream's output URL into the blob backend, streaming with a size cap and a timeout, so a
 * COMPLETED job never depends on an upstream link's lifetime. The bytes go to a local temp file,
 * are measured there (the settlement's delivered units) and then committed to the blob backend whole.
 * A failure is a ProviderError: the job fails and its hold is released.
 */
export async function fetchOutputToBlobs(
  url: string,
  blobs: BlobBackend,
  jobId: string,
  idx: number,
  fallbackType: string,
  signal: AbortSignal,
  maxBytes = OUTPUT_MAX_BYTES,
): Promise<StoredOutput> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(OUTPUT_FETCH_TIMEOUT_MS)]),
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw notDownloaded(jobId, url, (err as Error).name);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw notDownloaded(jobId, url, `answered ${res.status}`);
  }
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new ProviderError("failed", `The output is larger than ${maxBytes} bytes.`);
  const key = outputKey(jobId, idx);
  const tmp = blobs.tempPath(key);
  const fd = openSync(tmp, "w", 0o600);
  const hash = createHash("sha256");
  let size = 0;
  let head = new Uint8Array(0);
  try {
    for await (const chunk of res.body) {
      if (head.length < SNIFF_BYTES)
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      size += chunk.byteLength;
      if (size > maxBytes) throw new ProviderError("failed", `The output is larger than ${maxBytes} bytes.`);
      hash.update(chunk);
      for (let off = 0; off < chunk.byteLength; ) off += writeSync(fd, chunk, off);
    }
    closeSync(fd);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    if (err instanceof ProviderError || signal.aborted) throw err;
    throw new ProviderError("failed", "The output download was interrupted.");
  }
  // The bytes decide the type when they are a known format (an upstream's link may label a JPEG
  // image/png, or anything application/octet-stream); its header, then the provider's, otherwise.
  const labelled = normalizeContentType(res.headers.get("content-type"));
  const contentType = contentTypeOf(head, labelled) ?? labelled ?? fallbackType;
  const measured = await measureFileAsync(tmp, size);
  await blobs.commit(tmp, key, contentType); // the temp file is gone afterwards, stored or not
  return { idx, path: key, contentType, size, sha256: hash.digest("hex"), measured };
}
