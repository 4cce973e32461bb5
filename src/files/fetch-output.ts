import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { ProviderError } from "../providers/types.ts";
import type { StoredOutput } from "./output-store.ts";

export const OUTPUT_MAX_BYTES = 2 * 1024 ** 3;
export const OUTPUT_FETCH_TIMEOUT_MS = 10 * 60_000;

/**
 * Copies an upstream's output URL into the store, streaming with a size cap and a timeout, so a
 * COMPLETED job never depends on an upstream link's lifetime. A failure is a ProviderError: the
 * job fails and its hold is released.
 */
export async function fetchOutputToStore(
  url: string,
  root: string,
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
    throw new ProviderError(
      "failed",
      `The output could not be downloaded from the upstream (${(err as Error).name}).`,
    );
  }
  if (!res.ok || !res.body)
    throw new ProviderError("failed", `The upstream's output link answered ${res.status}.`);
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new ProviderError("failed", `The output is larger than ${maxBytes} bytes.`);
  const rel = join("outputs", jobId, String(idx));
  const abs = join(root, rel);
  mkdirSync(dirname(abs), { recursive: true, mode: 0o700 });
  const tmp = `${abs}.${process.pid}.part`;
  const fd = openSync(tmp, "w", 0o600);
  const hash = createHash("sha256");
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new ProviderError("failed", `The output is larger than ${maxBytes} bytes.`);
      hash.update(chunk);
      for (let off = 0; off < chunk.byteLength; ) off += writeSync(fd, chunk, off);
    }
    closeSync(fd);
    renameSync(tmp, abs);
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
  const contentType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim() || fallbackType;
  return { idx, path: rel, contentType, size, sha256: hash.digest("hex") };
}
