import type { Model } from "../../catalog/model.ts";
import { DATA_URL_MAX_BYTES, decodeDataUrl } from "../../lib/data-url.ts";
import { CONTENT_TYPES } from "../common.ts";
import { type MediaOutput, ProviderError, type ProviderResult } from "../types.ts";

type Obj = Record<string, unknown>;
type MediaKind = MediaOutput["kind"];

const DEFAULT_TYPE: Record<MediaKind, string> = {
  image: "image/png",
  video: "video/mp4",
  audio: "audio/mpeg",
};
const BY_EXTENSION = CONTENT_TYPES;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const positive = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) && v > 0 ? v : undefined;
const isFile = (v: unknown): boolean => (isObj(v) && typeof v.url === "string") || false;

/**
 * Maps a fal result body to the gateway's outputs, by the model's kind:
 * image/upscale <- `images[]` or `image`; video/avatar <- `video`; audio <- `audio` or `audio_url`.
 * A file is `{url, content_type?, width?, height?, duration?}` (or a bare URL string); `data:` URLs
 * (fal's sync_mode) are decoded to bytes, http(s) URLs are left for the worker to copy.
 * Other fields (seed, timings, has_nsfw_concepts...) pass through in `extra`, except other files.
 * fal's width/height/duration are declarations: the settlement measures the copied files and uses
 * them (and `actualUnits`) only where a file cannot be measured (docs/money.md, "Charge equals delivery").
 */
export function mapFalResult(model: Model, body: unknown): ProviderResult {
  if (!isObj(body)) throw new ProviderError("failed", "fal returned a result that is not a JSON object.");
  let files: unknown[];
  let kind: MediaKind;
  let mediaKeys: string[];
  switch (model.kind) {
    case "image":
    case "upscale":
      kind = "image";
      mediaKeys = ["images", "image"];
      files = Array.isArray(body.images) ? body.images : body.image !== undefined ? [body.image] : [];
      break;
    case "video":
    case "avatar":
      kind = "video";
      mediaKeys = ["video"];
      files = body.video !== undefined ? [body.video] : [];
      break;
    case "audio":
      kind = "audio";
      mediaKeys = ["audio", "audio_url"];
      files = body.audio !== undefined ? [body.audio] : body.audio_url !== undefined ? [body.audio_url] : [];
      break;
    default:
      throw new ProviderError("failed", `The fal provider does not serve ${model.kind} models.`);
  }
  if (files.length === 0) {
    // fal's own words (a result that is an error) are for the operator's log, not the client.
    throw new ProviderError(
      "failed",
      `fal returned a result without ${mediaKeys.map((k) => `"${k}"`).join(" or ")}.`,
      { detail: typeof body.detail === "string" ? body.detail : null },
    );
  }
  const topDuration = positive(body.duration);
  const outputs = files.map((f, i) => toOutput(kind, f, i, kind === "image" ? undefined : topDuration));

  const extra: Obj = {};
  for (const [k, v] of Object.entries(body)) {
    if (mediaKeys.includes(k) || isFile(v) || (Array.isArray(v) && v.some(isFile))) continue;
    extra[k] = v;
  }

  let actualUnits: number | undefined;
  if (model.unit === "image") actualUnits = outputs.length;
  else if (model.unit === "second" && kind !== "image") actualUnits = outputs[0]?.duration;
  return { outputs, ...(actualUnits !== undefined ? { actualUnits } : {}), extra };
}

function toOutput(kind: MediaKind, file: unknown, index: number, fallbackDuration?: number): MediaOutput {
  const f: Obj = typeof file === "string" ? { url: file } : isObj(file) ? file : {};
  const url = f.url;
  if (typeof url !== "string" || url === "") {
    throw new ProviderError("failed", `fal returned ${kind} output #${index + 1} without a URL.`);
  }
  const out: MediaOutput = { kind, contentType: "" };
  let sniffed: string | undefined;
  if (url.startsWith("data:")) {
    const decoded = decodeDataUrl(url);
    if (!decoded.ok) {
      const what =
        decoded.why === "too_large" ? `a data URL over ${DATA_URL_MAX_BYTES} bytes` : "a malformed data URL";
      throw new ProviderError("failed", `fal returned ${kind} output #${index + 1} as ${what}.`);
    }
    out.bytes = decoded.bytes;
    sniffed = decoded.type;
  } else if (/^https?:\/\//i.test(url)) {
    out.url = url;
    const ext = /\.([a-z0-9]{2,5})(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
    sniffed = ext ? BY_EXTENSION[ext] : undefined;
  } else {
    throw new ProviderError(
      "failed",
      `fal returned ${kind} output #${index + 1} with an unsupported URL scheme.`,
    );
  }
  const declared =
    typeof f.content_type === "string" && /^[\w.+-]+\/[\w.+-]+/.test(f.content_type)
      ? f.content_type
      : undefined;
  out.contentType = declared ?? sniffed ?? DEFAULT_TYPE[kind];
  const width = positive(f.width);
  const height = positive(f.height);
  if (width !== undefined && Number.isInteger(width)) out.width = width;
  if (height !== undefined && Number.isInteger(height)) out.height = height;
  const duration = positive(f.duration) ?? fallbackDuration;
  if (kind !== "image" && duration !== undefined) out.duration = duration;
  return out;
}
