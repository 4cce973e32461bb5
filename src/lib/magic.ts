import { ascii } from "./bytes.ts";

/**
 * Content types accepted for uploads, and what their first bytes must look like. The declared
 * Content-Type must be one of these, and the magic bytes must belong to the same family:
 * a client cannot store an HTML page labelled image/png.
 */
export type Family =
  | "png"
  | "jpeg"
  | "gif"
  | "webp"
  | "bmp"
  | "isobmff"
  | "webm"
  | "wav"
  | "mpeg-audio"
  | "ogg"
  | "flac";

const ALLOWED: Record<string, Family> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
  "video/mp4": "isobmff",
  "video/quicktime": "isobmff",
  "audio/mp4": "isobmff",
  "audio/m4a": "isobmff",
  "video/webm": "webm",
  "audio/webm": "webm",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mpeg-audio",
  "audio/mp3": "mpeg-audio",
  "audio/ogg": "ogg",
  "video/ogg": "ogg",
  "audio/flac": "flac",
};

export const ALLOWED_CONTENT_TYPES = Object.keys(ALLOWED);

/** "image/PNG; charset=x" -> "image/png"; null when missing. */
export function normalizeContentType(header: string | null): string | null {
  if (!header) return null;
  const t = header.split(";")[0]!.trim().toLowerCase();
  return t || null;
}

export function familyOf(contentType: string): Family | null {
  return ALLOWED[contentType] ?? null;
}

/**
 * The content type `head` (the first SNIFF_BYTES bytes) is: `declared` when it names their family
 * (video/quicktime stays itself), else the family's usual type (the first listed above); null when
 * the bytes are none of the families. An upstream's label is not trusted over its bytes.
 */
export function contentTypeOf(head: Uint8Array, declared: string | null): string | null {
  const family = sniffFamily(head);
  if (!family) return null;
  if (declared && ALLOWED[declared] === family) return declared;
  return ALLOWED_CONTENT_TYPES.find((t) => ALLOWED[t] === family) ?? null;
}

/** Bytes needed to recognise every family. */
export const SNIFF_BYTES = 16;

/** The family the first bytes belong to, or null. */
export function sniffFamily(head: Uint8Array): Family | null {
  if (head.length < 4) return null;
  if (head[0] === 0x89 && ascii(head, 1, 3) === "PNG") return "png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (ascii(head, 0, 4) === "GIF8") return "gif";
  if (ascii(head, 0, 2) === "BM" && head.length >= 14) return "bmp";
  if (ascii(head, 0, 4) === "RIFF" && head.length >= 12) {
    const kind = ascii(head, 8, 4);
    if (kind === "WEBP") return "webp";
    if (kind === "WAVE") return "wav";
    return null;
  }
  if (head.length >= 8 && ascii(head, 4, 4) === "ftyp") return "isobmff";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "webm";
  if (ascii(head, 0, 3) === "ID3") return "mpeg-audio";
  if (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) return "mpeg-audio"; // MPEG audio frame sync
  if (ascii(head, 0, 4) === "OggS") return "ogg";
  if (ascii(head, 0, 4) === "fLaC") return "flac";
  return null;
}
