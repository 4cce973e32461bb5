import { lookup } from "node:dns/promises";
import { isPublicAddress } from "../../lib/addresses.ts";
import { readAllCapped } from "../../lib/read-capped.ts";
import { ProviderError } from "../types.ts";
import { type UpstreamCall, upstreamFetch, upstreamMessage } from "../upstream-http.ts";

/**
 * fetch with the gateway's transport mapping (see upstream-http.ts): connection failures,
 * timeouts, 429, 502, 503 and 504 -> "capacity"; the job's own abort is rethrown as is. Other
 * statuses are the caller's to read (ComfyUI's 400 body carries the node errors).
 */
export function send(url: string, init: RequestInit, call: UpstreamCall): Promise<Response> {
  return upstreamFetch(url, init, call, "ComfyUI");
}

/** The generic answer to an unexpected status: other 4xx -> "input", 5xx -> "failed". */
export function statusError(res: Response, text: string, what: string): ProviderError {
  return new ProviderError(
    res.status >= 500 ? "failed" : "input",
    `ComfyUI answered ${res.status} to ${what}${upstreamMessage(text)}.`,
  );
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

/** A gateway signed file link (`.../v1/files/file_…/content?exp=…&sig=…`), which file ids become. */
export function isSignedFileLink(url: URL): boolean {
  return (
    /\/v1\/files\/file_[A-Za-z0-9_-]+\/content$/.test(url.pathname) &&
    url.searchParams.has("exp") &&
    url.searchParams.has("sig")
  );
}

export type HostResolver = (hostname: string) => Promise<string[]>;
const systemResolver: HostResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Whether the gateway may fetch an image URL from a client's input: the gateway's own signed
 * file links (file ids), or hosts that resolve only to public addresses, so a client cannot make
 * the gateway read services on the operator's network (SSRF) and feed them to a workflow.
 */
export async function fetchAllowed(url: URL, resolve: HostResolver = systemResolver): Promise<boolean> {
  if (url.username !== "" || url.password !== "") return false;
  if (isSignedFileLink(url)) return true;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return false;
  }
  return addresses.length > 0 && addresses.every(isPublicAddress);
}
