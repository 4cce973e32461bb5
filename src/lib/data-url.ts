/**
 * `data:` URLs (RFC 2397) as upstreams return small outputs inline: fal's `sync_mode`, Replicate's
 * file outputs (its client treats `data:` like `https:` file URLs), cog servers.
 */

/** The largest decoded `data:` URL accepted: 64 MiB, a long video clip inlined in one JSON answer. */
export const DATA_URL_MAX_BYTES = 64 * 1024 * 1024;

export type DataUrl =
  | { ok: true; bytes: Uint8Array; type: string | undefined }
  | { ok: false; why: "malformed" | "empty" | "too_large" };

/**
 * Decodes a `data:[<type>][;param...][;base64],<data>` URL. The size is bounded from the encoded
 * length BEFORE anything is decoded (base64 holds 3 bytes per 4 characters; a percent-encoded
 * payload at most one byte per character), so an oversized URL costs no allocation. `type` is the
 * declared media type, lower-cased: a claim the caller may check against the bytes. Never throws.
 */
export function decodeDataUrl(url: string, maxBytes = DATA_URL_MAX_BYTES): DataUrl {
  const comma = url.indexOf(",");
  if (!/^data:/i.test(url) || comma < 0) return { ok: false, why: "malformed" };
  const params = url.slice(5, comma).split(";");
  const base64 = params.length > 1 && params[params.length - 1]!.toLowerCase() === "base64";
  const type = params[0]?.trim().toLowerCase() || undefined;
  const payloadChars = url.length - comma - 1;
  const upperBound = base64 ? Math.floor((payloadChars * 3) / 4) : payloadChars;
  if (upperBound > maxBytes) return { ok: false, why: "too_large" };
  const payload = url.slice(comma + 1);
  let bytes: Uint8Array;
  try {
    if (base64) {
      const clean = payload.replace(/\s+/g, "");
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) return { ok: false, why: "malformed" };
      bytes = Uint8Array.from(Buffer.from(clean, "base64"));
    } else {
      bytes = new TextEncoder().encode(decodeURIComponent(payload));
    }
  } catch {
    return { ok: false, why: "malformed" };
  }
  if (bytes.length === 0) return { ok: false, why: "empty" };
  if (bytes.length > maxBytes) return { ok: false, why: "too_large" };
  return { ok: true, bytes, type };
}
