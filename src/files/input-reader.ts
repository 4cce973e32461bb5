import { log } from "../lib/log.ts";
import { ProviderError } from "../providers/types.ts";
import { getPinned, PinnedGetError } from "../webhooks/pinned.ts";
import type { Resolver, WebhookPolicy } from "../webhooks/url-policy.ts";
import { type BlobBackend, BlobBackendUnavailable } from "./blob-backend.ts";
import { ownFileLink } from "./references.ts";
import { checkUploadLink, type LinkSigner } from "./signing.ts";
import { FILE_ID, type FileStore } from "./store.ts";

/** An input file's bytes, for a provider that must hand them to its upstream itself. */
export interface InputBytes {
  bytes: Uint8Array;
  /** As stored or as the URL's server declared it; null when it declared none. */
  contentType: string | null;
}

export interface InputReadOptions {
  /** The input field, for messages ("image_url"). */
  what: string;
  maxBytes: number;
  /** The whole fetch of an outside URL. */
  timeoutMs: number;
  /** The job's signal: its abort is rethrown as is. */
  signal: AbortSignal;
  /** The job, for the server's log. */
  requestId?: string;
}

/** Reads one input value (a file id, a signed link to an upload, or any URL) for an account's job. */
export type InputReader = (value: string, accountId: string, o: InputReadOptions) => Promise<InputBytes>;

export interface InputReaderDeps {
  publicUrl: string;
  signer: LinkSigner;
  files: FileStore;
  blobs: BlobBackend;
  /** The outbound policy of webhooks (`webhooks.allow_private_cidrs`), read at each fetch (reloadable). */
  policy: () => WebhookPolicy;
  resolve?: Resolver;
  /** Extra trusted CA certificates for https (tests). */
  ca?: string | Buffer;
}

/**
 * The one way a provider reads an input file itself (ComfyUI uploads it to its own server; OpenAI
 * edits send it as multipart):
 *
 * - a file id, or a link to one of this server's own uploads (`{public_url}/v1/files/{id}/content`,
 *   which file ids become for providers), is read from the blob backend, never over HTTP: the link's
 *   signature is checked as a download checks it, and the file must be a live file of the job's
 *   account (`FileStore.getLive`), so another account's id or a forged link is refused;
 * - any other URL is fetched through the outbound policy of webhooks (`webhooks/url-policy.ts`: every
 *   address of its host public or allow-listed, the connection pinned to the checked address, no
 *   redirects, no credentials).
 *
 * A refusal or a failed fetch is one fixed message, whatever the reason: repeating the status or the
 * error of a fetched URL would let a client probe what answers where (open vs closed ports). The
 * reason goes to the server's log only.
 */
export function inputReader(deps: InputReaderDeps): InputReader {
  return async (value, accountId, o) => {
    const own = FILE_ID.test(value) ? { fileId: value, query: null } : ownFileLink(value, deps.publicUrl);
    if (own) return await readOwnFile(deps, own.fileId, own.query, accountId, o);
    return await fetchOutside(deps, value, o);
  };
}

const notOwnFile = (what: string) =>
  new ProviderError(
    "input",
    `${what}: the file is not a live file of this account, or its link is invalid or expired.`,
  );
const tooLarge = (what: string, max: number) =>
  new ProviderError("input", `${what} is larger than ${Math.round(max / 1048576)} MB.`);

async function readOwnFile(
  deps: InputReaderDeps,
  fileId: string,
  query: URLSearchParams | null,
  accountId: string,
  o: InputReadOptions,
): Promise<InputBytes> {
  // A signed link must verify; signed or not, the file must be the job's account's (as at submit).
  const signed = query !== null && (query.has("exp") || query.has("sig"));
  if (signed) {
    const link = checkUploadLink(
      deps.signer,
      fileId,
      query.get("exp") ?? undefined,
      query.get("sig") ?? undefined,
    );
    if (link !== "ok") throw notOwnFile(o.what);
  }
  const file = await deps.files.getLive(fileId, accountId);
  if (!file) throw notOwnFile(o.what);
  const size = Number(file.size);
  if (size > o.maxBytes) throw tooLarge(o.what, o.maxBytes);
  let bytes: Uint8Array;
  try {
    bytes = await deps.blobs.read(file.path, 0, size);
  } catch (err) {
    // S3 down: the job backs off and retries within its time limit, as for a busy upstream.
    if (err instanceof BlobBackendUnavailable) {
      throw new ProviderError("capacity", "The file store cannot be reached right now.");
    }
    throw err;
  }
  if (bytes.length !== size) {
    log("error", "stored file missing or damaged", {
      request_id: o.requestId,
      file_id: fileId,
      store: deps.blobs.location,
      path: file.path,
      expected_size: size,
      actual_size: bytes.length,
    });
    throw new ProviderError("failed", `${o.what}: the stored file's bytes are missing on the server.`);
  }
  return { bytes, contentType: file.content_type };
}

async function fetchOutside(deps: InputReaderDeps, value: string, o: InputReadOptions): Promise<InputBytes> {
  const fixed = new ProviderError(
    "input",
    `${o.what}: the URL could not be fetched. It must be a file id, or a public http(s) URL that answers 200 with the file.`,
  );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw fixed;
  }
  try {
    return await getPinned(url, {
      policy: deps.policy(),
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
      ...(deps.ca ? { ca: deps.ca } : {}),
      timeoutMs: o.timeoutMs,
      maxBytes: o.maxBytes,
      signal: o.signal,
    });
  } catch (err) {
    if (o.signal.aborted) throw err;
    if (err instanceof PinnedGetError && err.kind === "too-large") throw tooLarge(o.what, o.maxBytes);
    log("warn", "input URL not fetched", {
      request_id: o.requestId,
      field: o.what,
      host: url.host,
      reason: err instanceof Error ? err.message : String(err),
    });
    throw fixed;
  }
}
