/**
 * The headers of every response that serves stored user bytes (uploads, job outputs: signed or
 * keyed, whole or a range, GET or HEAD), so that no stored file can act as a page of this origin:
 *
 * - `X-Content-Type-Options: nosniff`: the browser keeps the declared type and never guesses HTML
 *   or script from the bytes (an upstream's output could start like a page);
 * - `Content-Disposition`: `inline` only for image, audio and video types that a browser shows as
 *   media (a studio `<img>`/`<video>`, a link opened in a tab); `attachment` for everything else,
 *   including text/html and image/svg+xml (SVG is a document that can run script), so such a file
 *   is downloaded, never rendered here. The file name is ASCII in `filename` and UTF-8 in
 *   `filename*` (RFC 6266, RFC 8187);
 * - `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; sandbox`: should a
 *   browser render the file anyway, it loads nothing, runs no script and has an opaque origin (no
 *   cookies, no storage of this origin). `style-src 'unsafe-inline'` lets a browser's own viewer page
 *   for an image or a video style itself; the same policy serves GitHub's user content.
 */

export const DOWNLOAD_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/** image/audio/video types shown inline: not SVG or any XML-based type (a document that can run script). */
const INLINE_MEDIA = /^(image|audio|video)\/[a-z0-9][a-z0-9.+-]*$/;

/** File name extensions of the types gengate stores, for the downloaded file's name. */
const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
  "image/svg+xml": "svg",
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "video/webm": "webm",
  "video/ogg": "ogv",
  "audio/mp4": "m4a",
  "audio/m4a": "m4a",
  "audio/webm": "weba",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/ogg": "ogg",
  "audio/flac": "flac",
  "text/html": "html",
  "text/plain": "txt",
  "application/json": "json",
};

/** The media type of a Content-Type value, lower case, without parameters. */
function mediaType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

/** Whether a file of this type is shown inline (safe media) rather than downloaded. */
export function isInlineMedia(contentType: string): boolean {
  const type = mediaType(contentType);
  return INLINE_MEDIA.test(type) && !type.includes("svg") && !type.includes("xml");
}

/** `<base>.<extension of the type>` (`.bin` for a type without one). */
export function downloadName(base: string, contentType: string): string {
  return `${base}.${EXTENSIONS[mediaType(contentType)] ?? "bin"}`;
}

/**
 * A Content-Disposition value (RFC 6266): `filename` with every character outside a safe ASCII set
 * replaced by `_` (no quote, backslash, control character or path separator can end up in it), and
 * `filename*` with the whole name percent-encoded as UTF-8 (RFC 8187).
 */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "download";
  const utf8 = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/** The headers of a stored file's bytes (see above); `base`: the downloaded name without extension. */
export function downloadHeaders(contentType: string, base: string): Record<string, string> {
  const kind = isInlineMedia(contentType) ? "inline" : "attachment";
  return {
    "content-type": contentType,
    "x-content-type-options": "nosniff",
    "content-disposition": contentDisposition(kind, downloadName(base, contentType)),
    "content-security-policy": DOWNLOAD_CSP,
  };
}
