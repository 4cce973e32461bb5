import { DomainError } from "../lib/errors.ts";
import { LINK_TTL_SECONDS, type LinkSigner } from "./signing.ts";
import type { FileRow, FileStore } from "./store.ts";

/** Any string starting with this in a model input is a file reference (malformed ones included). */
const PREFIX = "file_";

/** Every string value of an input with its path ("input.images[2].url"), at any depth. */
function* strings(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === "string") yield [path, value];
  else if (Array.isArray(value))
    for (let i = 0; i < value.length; i++) yield* strings(value[i], `${path}[${i}]`);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) yield* strings(v, `${path}.${k}`);
  }
}

/**
 * Resolves the file ids in a model input at submit. An unknown, deleted, expired, malformed or
 * another account's file is 400 unknown_file naming the field, so the job never starts with an
 * input it cannot fetch. Returns the files by id (for pricing and the provider).
 */
export async function resolveFileRefs(
  files: FileStore,
  accountId: string,
  input: unknown,
): Promise<Map<string, FileRow>> {
  const found = new Map<string, FileRow>();
  for (const [path, value] of strings(input, "input")) {
    if (!value.startsWith(PREFIX)) continue;
    const row = found.get(value) ?? (await files.getLive(value, accountId));
    if (!row) {
      throw new DomainError(
        "unknown_file",
        `${path} refers to ${value.slice(0, 40)}, which is not a live file of this account.`,
        {
          param: path,
        },
      );
    }
    found.set(value, row);
  }
  return found;
}

/** A copy of the input with each file id replaced (e.g. by a signed URL the provider can fetch). */
export function replaceFileRefs(input: unknown, replace: (fileId: string) => string): unknown {
  if (typeof input === "string") return input.startsWith(PREFIX) ? replace(input) : input;
  if (Array.isArray(input)) return input.map((v) => replaceFileRefs(v, replace));
  if (input !== null && typeof input === "object") {
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, replaceFileRefs(v, replace)]));
  }
  return input;
}

/** Where an uploaded file's bytes are read (with the owning key or a signed exp/sig query). */
export function fileContentUrl(publicUrl: string, fileId: string): string {
  return `${publicUrl}/v1/files/${fileId}/content`;
}

/** A signed link to an uploaded file's bytes, for upstreams that fetch inputs by URL. */
export function signedFileUrl(
  ctx: { publicUrl: string; signer: LinkSigner },
  fileId: string,
  ttlSeconds = LINK_TTL_SECONDS,
): string {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  return `${fileContentUrl(ctx.publicUrl, fileId)}?exp=${exp}&sig=${ctx.signer.sign(fileId, 0, exp)}`;
}

const OWN_FILE_TAIL = /^(file_[0-9A-Za-z]{24})\/content(\?[^#\s]*)?$/;

/**
 * The file id and query of a link to one of this server's own uploads
 * ("{public_url}/v1/files/{file_id}/content", with or without exp/sig), or null for any other value.
 * Only this origin counts: the same path on another host is just another URL.
 */
export function ownFileLink(
  value: string,
  publicUrl: string,
): { fileId: string; query: URLSearchParams } | null {
  const prefix = `${publicUrl}/v1/files/`;
  if (!value.startsWith(prefix)) return null;
  const m = OWN_FILE_TAIL.exec(value.slice(prefix.length));
  return m ? { fileId: m[1]!, query: new URLSearchParams(m[2] ?? "") } : null;
}

/**
 * A copy of the input with every link to one of this server's own uploads
 * ("{public_url}/v1/files/{file_id}/content", signed or not) replaced by its file id, so a URL
 * handed out by the fal storage protocol works as a model input exactly like the id (same account
 * check, same pricing, same signed link for the provider).
 */
export function ownFileUrlsToIds(input: unknown, publicUrl: string): unknown {
  if (typeof input === "string") return ownFileLink(input, publicUrl)?.fileId ?? input;
  if (Array.isArray(input)) return input.map((v) => ownFileUrlsToIds(v, publicUrl));
  if (input !== null && typeof input === "object") {
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, ownFileUrlsToIds(v, publicUrl)]));
  }
  return input;
}

/**
 * Pixel size of a resolved file referenced by an input value (a "file_..." id), as measured at
 * upload; null for any other value or a file whose size is unknown. Prices upscales (see
 * ImageSizeLookup in src/pricing/megapixels.ts) at estimate and at submit alike.
 */
export function uploadedImageSize(
  files: Map<string, FileRow>,
): (value: string) => { width: number; height: number } | null {
  return (value) => fileImageSize(files.get(value));
}

/** A file's pixel size as measured at upload, or null (not an image it could measure, or no file). */
export function fileImageSize(f: FileRow | null | undefined): { width: number; height: number } | null {
  return f && f.width !== null && f.height !== null
    ? { width: Number(f.width), height: Number(f.height) }
    : null;
}
