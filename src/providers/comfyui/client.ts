import { readAllCapped } from "../../lib/read-capped.ts";
import { ProviderError } from "../types.ts";
import { type UpstreamCall, upstreamDetail, upstreamFetch } from "../upstream-client.ts";

/**
 * fetch with the gateway's transport mapping (see upstream-client.ts): connection failures,
 * timeouts, 429, 502, 503 and 504 -> "capacity"; the job's own abort is rethrown as is. Other
 * statuses are the caller's to read (ComfyUI's 400 body carries the node errors).
 */
export function send(url: string, init: RequestInit, call: UpstreamCall): Promise<Response> {
  return upstreamFetch(url, init, call, "ComfyUI");
}

/**
 * The generic answer to an unexpected status: other 4xx -> "input", 5xx -> "failed"; ComfyUI's
 * status and words are the error's `status` and `detail` (the operator's log), not its message.
 */
export function statusError(
  res: Response,
  text: string,
  what: string,
  secret?: string | null,
): ProviderError {
  const failed = res.status >= 500;
  return new ProviderError(failed ? "failed" : "input", `ComfyUI ${failed ? "failed" : "refused"} ${what}.`, {
    status: res.status,
    detail: upstreamDetail(text),
    secret: secret ?? null,
  });
}

/** The body, refused past `max` bytes (from Content-Length, then while streaming). */
export async function readBounded(res: Response, max: number, what: string, call: UpstreamCall) {
  const tooBig = () => new ProviderError("failed", `${what} is larger than ${Math.round(max / 1048576)} MB.`);
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw tooBig();
  }
  try {
    return await readAllCapped(res.body, max, tooBig);
  } catch (err) {
    if (err instanceof ProviderError || call.signal.aborted) throw err;
    // Transient: the job is retried and, having its prompt id, reads the same files again.
    throw new ProviderError("capacity", `${what} was cut off while downloading.`);
  }
}
