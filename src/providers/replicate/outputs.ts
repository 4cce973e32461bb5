import type { Kind } from "../../catalog/model.ts";
import { DATA_URL_MAX_BYTES, decodeDataUrl } from "../../lib/data-url.ts";
import { CONTENT_TYPES, mediaTypeFromBytes } from "../common.ts";
import { type MediaOutput, ProviderError } from "../types.ts";

type MediaKind = MediaOutput["kind"];

/** The media kind a model's outputs are stored as, or null for kinds this provider does not serve. */
export function mediaKindOf(kind: Kind): MediaKind | null {
  if (kind === "image" || kind === "upscale") return "image";
  if (kind === "video" || kind === "avatar") return "video";
  if (kind === "audio") return "audio";
  return null;
}

const DEFAULT_TYPES: Record<MediaKind, string> = {
  image: "image/png",
  video: "video/mp4",
  audio: "audio/mpeg",
};

/** Content type from the URL path's extension (query and fragment ignored), else the kind's default. */
export function guessContentType(url: string, kind: MediaKind): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not parseable: fall back to the raw string
  }
  const ext = /\.([A-Za-z0-9]{1,5})$/.exec(path)?.[1]?.toLowerCase();
  return (ext && CONTENT_TYPES[ext]) || DEFAULT_TYPES[kind];
}

/**
 * A file in a Replicate output: an http(s) URL, or a `data:` URL, which Replicate's own client takes
 * for a file just the same (replicate-javascript index.js `run`: a string starting with "https:" or
 * "data:" becomes a FileOutput when `useFileOutput` is on, its default).
 */
const isUrl = (v: unknown): v is string =>
  typeof v === "string" && (/^data:/i.test(v) || /^https?:\/\/\S+$/i.test(v.trim()));

/** Every file URL string (http(s) or data:) at any depth of a Replicate output, in output order. */
export function collectUrls(output: unknown, into: string[] = [], depth = 0): string[] {
  if (depth > 32) return into;
  if (isUrl(output)) into.push(output.trim());
  else if (Array.isArray(output)) for (const v of output) collectUrls(v, into, depth + 1);
  else if (output && typeof output === "object")
    for (const v of Object.values(output)) collectUrls(v, into, depth + 1);
  return into;
}

const DROP = Symbol("drop");

/** The output with every URL string removed (and the lists/objects left empty by that), or DROP. */
function withoutUrls(output: unknown, depth = 0): unknown {
  if (depth > 32) return DROP;
  if (isUrl(output)) return DROP;
  if (Array.isArray(output)) {
    const rest = output.map((v) => withoutUrls(v, depth + 1)).filter((v) => v !== DROP);
    return rest.length === 0 ? DROP : rest;
  }
  if (output && typeof output === "object") {
    const entries = Object.entries(output)
      .map(([k, v]) => [k, withoutUrls(v, depth + 1)] as const)
      .filter(([, v]) => v !== DROP);
    return entries.length === 0 ? DROP : Object.fromEntries(entries);
  }
  return output === undefined || output === null ? DROP : output;
}

/** Keys the worker's output template owns: an upstream field of that name must not replace the media. */
const RESERVED = new Set(["images", "video", "audio", "output"]);

/**
 * Maps a Replicate `output` of any shape (a cog server's too: the same model containers; `who`
 * names the upstream in messages) to media (by URL, downloaded by the worker) and the non-URL
 * values to `extra`: an object output's fields are passed through at the top level (a field named
 * like the template's own keys goes under `output`); any other shape goes under `output`.
 */
export function mapOutput(
  output: unknown,
  kind: MediaKind,
  who = "Replicate",
): { outputs: MediaOutput[]; extra: Record<string, unknown> } {
  const outputs = collectUrls(output).map((url, i) =>
    /^data:/i.test(url)
      ? inlineOutput(url, i, kind, who)
      : { kind, contentType: guessContentType(url, kind), url },
  );
  const rest = withoutUrls(output);
  const extra: Record<string, unknown> = {};
  if (rest !== DROP) {
    if (rest && typeof rest === "object" && !Array.isArray(rest)) {
      const nested: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(rest)) {
        if (RESERVED.has(k)) nested[k] = v;
        else extra[k] = v;
      }
      if (Object.keys(nested).length > 0) extra.output = nested;
    } else {
      extra.output = rest;
    }
  }
  return { outputs, extra };
}

/**
 * A `data:` output decoded to the bytes the worker stores (bounded before decoding, see
 * decodeDataUrl). Its type is read from the bytes, not from the URL's claim; bytes that are no media
 * gengate knows fail the job (nothing is charged) rather than being stored under a made-up type.
 */
function inlineOutput(url: string, index: number, kind: MediaKind, who: string): MediaOutput {
  const decoded = decodeDataUrl(url);
  const which = `${who}'s output #${index + 1}`;
  if (!decoded.ok) {
    throw new ProviderError(
      "failed",
      decoded.why === "too_large"
        ? `${which} is a data: URL over the limit of ${DATA_URL_MAX_BYTES} bytes.`
        : `${which} is a malformed data: URL.`,
    );
  }
  const contentType = mediaTypeFromBytes(decoded.bytes, kind);
  if (!contentType)
    throw new ProviderError("failed", `${which} is a data: URL that holds no known ${kind} format.`);
  return { kind, contentType, bytes: decoded.bytes };
}
