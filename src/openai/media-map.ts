import { FAL_IMAGE_SIZES } from "../catalog/input-forms.ts";
import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";

/**
 * OpenAI's image and speech parameters mapped to a catalog model's input (docs/clients.md "OpenAI
 * images and speech"). Pure: what a model accepts is read from its input_schema, so an operator's
 * model with its own schema is mapped by the same rules as the sandbox's. Every refusal is 400
 * validation_error naming what the model does accept.
 */

type Schema = Record<string, unknown>;

/** The properties of a model's input schema (empty when it declares none). */
function props(model: Model): Record<string, Schema> {
  const p = model.input_schema.properties;
  return p && typeof p === "object" ? (p as Record<string, Schema>) : {};
}

/** A property's string enum, or null. */
function enumOf(schema: Schema | undefined): string[] | null {
  const e = schema?.enum;
  return Array.isArray(e) && e.every((v) => typeof v === "string") ? (e as string[]) : null;
}

function bad(message: string, param: string): DomainError {
  return new DomainError("validation_error", message, { param });
}

/**
 * fal's named image sizes (catalog/input-forms.ts), in pixels: a "WxH" request maps to the name
 * with the same frame, else to the nearest one with the same aspect ratio.
 */
const NAMED_SIZES = FAL_IMAGE_SIZES;

const SIZE = /^(\d{1,5})x(\d{1,5})$/;

/** A tier's frame: a fal size name or a "WxH" value; null for anything else. */
function frameOf(tier: string): readonly [number, number] | null {
  const m = SIZE.exec(tier);
  if (m) return [Number(m[1]), Number(m[2])];
  return NAMED_SIZES[tier] ?? null;
}

/**
 * `size` ("WxH", "auto" or absent) as the model's own fields: width/height (inside the schema's
 * bounds), or an `image_size` tier (the same frame, else the nearest of the same aspect ratio:
 * within 1%, the closest area). "auto" and absent leave the model's default. A size the model
 * cannot make is 400 naming the sizes it can.
 */
export function mapImageSize(model: Model, size: unknown): Record<string, unknown> {
  if (size === undefined || size === null || size === "auto") return {};
  if (typeof size !== "string" || !SIZE.test(size)) {
    throw bad('size must be "WIDTHxHEIGHT" (for example "1024x1024") or "auto".', "size");
  }
  const [w, h] = frameOf(size)!;
  const p = props(model);
  if (p.width && p.height) {
    const lo = Math.max(Number(p.width.minimum ?? 1), Number(p.height.minimum ?? 1));
    const hi = Math.min(
      Number(p.width.maximum ?? Number.MAX_SAFE_INTEGER),
      Number(p.height.maximum ?? Number.MAX_SAFE_INTEGER),
    );
    if (w < lo || h < lo || w > hi || h > hi) {
      throw bad(
        `${model.id} makes images from ${lo}x${lo} to ${hi}x${hi} pixels; size ${size} is outside that.`,
        "size",
      );
    }
    return { width: w, height: h };
  }
  const tiers = enumOf(p.image_size);
  if (tiers) {
    const framed = tiers.flatMap((t) => {
      const f = frameOf(t);
      return f ? [{ tier: t, w: f[0], h: f[1] }] : [];
    });
    const exact = framed.find((t) => t.w === w && t.h === h);
    const ratio = w / h;
    const sameAspect = framed
      .filter((t) => Math.abs(t.w / t.h - ratio) / ratio <= 0.01)
      .sort((a, b) => Math.abs(a.w * a.h - w * h) - Math.abs(b.w * b.h - w * h));
    const pick = exact ?? sameAspect[0];
    if (pick) return { image_size: pick.tier };
    const allowed = framed.map((t) => `${t.w}x${t.h}`);
    throw bad(
      `${model.id} cannot make ${size}; the sizes it makes are: ${[...new Set(allowed)].join(", ")} (or "auto").`,
      "size",
    );
  }
  if (p.image_size) return { image_size: { width: w, height: h } };
  throw bad(`${model.id} takes no size; omit size or send "auto".`, "size");
}

/** `output_format` (images) or `response_format` (speech) checked against the model's `output_format` enum. */
function mapFormat(model: Model, format: unknown, param: string, strictWhenUndeclared: boolean) {
  if (format === undefined || format === null) return {};
  const allowed = enumOf(props(model).output_format);
  if (typeof format !== "string" || (allowed && !allowed.includes(format))) {
    const can = allowed ? allowed.join(", ") : "its one format";
    throw bad(`${model.id} produces ${can}; ${param} ${JSON.stringify(format)} is not one of them.`, param);
  }
  if (allowed) return { output_format: format };
  if (strictWhenUndeclared) throw bad(`${model.id} has no choice of ${param}; omit it.`, param);
  return {};
}

/**
 * The parameters an images call may carry. Those mapped below are used; the others (quality, style,
 * user, background, ...) change nothing a gengate model does and are dropped, so that clients
 * sending them by default keep working (docs/clients.md). Anything else is 400.
 */
const KNOWN_IMAGE_PARAMS = [
  "model",
  "prompt",
  "n",
  "size",
  "response_format",
  "output_format",
  "quality",
  "style",
  "user",
  "background",
  "moderation",
  "output_compression",
  "safety_identifier",
  "input_fidelity",
  "partial_images",
  "stream",
  "image",
  "mask",
  "sandbox",
  "webhook_url",
];

/**
 * `url`, `b64_json`, or `both` when the client named none: OpenAI's GPT image models answer
 * b64_json only and dall-e's a url by default, and clients read the one their model gives
 * (@ai-sdk/openai reads data[].b64_json of an edit without asking for it), so an unnamed format
 * answers both.
 */
export type ImageResponseFormat = "url" | "b64_json" | "both";

/** An OpenAI images request made the model's input. */
export interface MappedImages {
  input: Record<string, unknown>;
  responseFormat: ImageResponseFormat;
}

/**
 * POST /images/generations and /images/edits: `prompt`, `n` -> num_images, `size`, `output_format`;
 * `images`/`mask` are the edit's stored uploads (file ids), put in the model's image field(s).
 */
export function mapImageRequest(
  model: Model,
  body: Record<string, unknown>,
  edit?: { images: string[]; mask: string | null },
): MappedImages {
  for (const key of Object.keys(body)) {
    if (!KNOWN_IMAGE_PARAMS.includes(key)) throw bad(`Unknown parameter: ${key}.`, key);
  }
  if (body.stream === true || body.stream === "true") {
    throw bad("Streamed image generation is not served; omit stream.", "stream");
  }
  if (typeof body.prompt !== "string" || body.prompt.length === 0) {
    throw bad("prompt is required: a non-empty string.", "prompt");
  }
  const asked = body.response_format;
  if (asked != null && asked !== "url" && asked !== "b64_json") {
    throw bad('response_format must be "url" or "b64_json".', "response_format");
  }
  const format: ImageResponseFormat = asked ?? "both";
  const p = props(model);
  const input: Record<string, unknown> = { prompt: body.prompt };
  const n = typeof body.n === "string" && /^\d+$/.test(body.n) ? Number(body.n) : body.n;
  if (n !== undefined && n !== null) {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) throw bad("n must be an integer >= 1.", "n");
    if (p.num_images) input.num_images = n;
    else if (n !== 1) throw bad(`${model.id} makes one image per call; send n = 1.`, "n");
  }
  Object.assign(input, mapImageSize(model, body.size));
  Object.assign(input, mapFormat(model, body.output_format, "output_format", true));
  if (edit) Object.assign(input, mapEditImages(model, edit));
  Object.assign(input, gengateExtras(body));
  return { input, responseFormat: format };
}

/** The edit's source image(s) and mask in the model's fields: image_urls (several) or image_url (one), mask_url. */
function mapEditImages(model: Model, edit: { images: string[]; mask: string | null }) {
  const p = props(model);
  const out: Record<string, unknown> = {};
  if (edit.images.length === 0) throw bad("image is required: one or more image files.", "image");
  if (p.image_urls) out.image_urls = edit.images;
  else if (p.image_url && edit.images.length === 1) out.image_url = edit.images[0];
  else if (p.image_url) throw bad(`${model.id} takes one source image; send one image.`, "image");
  else throw bad(`${model.id} takes no image input: use POST /v1/images/generations.`, "image");
  if (edit.mask !== null) {
    if (!p.mask_url) throw bad(`${model.id} takes no mask; omit mask.`, "mask");
    out.mask_url = edit.mask;
  }
  return out;
}

const KNOWN_SPEECH_PARAMS = [
  "model",
  "input",
  "voice",
  "response_format",
  "speed",
  "instructions",
  "stream_format",
  "sandbox",
  "webhook_url",
];

/**
 * POST /audio/speech: `input` -> text, `voice` (a name or {id}) where the model has one,
 * `response_format` from the model's output formats, `speed` where the model has it (1 is
 * accepted by any), `instructions` dropped.
 */
export function mapSpeechRequest(model: Model, body: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(body)) {
    if (!KNOWN_SPEECH_PARAMS.includes(key)) throw bad(`Unknown parameter: ${key}.`, key);
  }
  if (typeof body.input !== "string" || body.input.length === 0) {
    throw bad("input is required: the text to speak.", "input");
  }
  if (body.stream_format !== undefined && body.stream_format !== "audio") {
    throw bad('Only stream_format "audio" is served.', "stream_format");
  }
  const p = props(model);
  const input: Record<string, unknown> = { text: body.input };
  const voice =
    typeof body.voice === "object" && body.voice !== null ? (body.voice as { id?: unknown }).id : body.voice;
  if (voice !== undefined && typeof voice !== "string") throw bad("voice must be a name or {id}.", "voice");
  if (voice !== undefined && p.voice) input.voice = voice;
  Object.assign(input, mapFormat(model, body.response_format, "response_format", false));
  if (body.speed !== undefined && body.speed !== null) {
    if (typeof body.speed !== "number") throw bad("speed must be a number.", "speed");
    if (p.speed) input.speed = body.speed;
    else if (body.speed !== 1) throw bad(`${model.id} has no speed control; omit speed or send 1.`, "speed");
  }
  return { ...input, ...gengateExtras(body) };
}

/**
 * gengate's own fields, passed through as they are (an SDK's extra body field): `webhook_url` (the
 * job's webhook, checked by the webhook policy like any submit's) and the sandbox controls
 * (docs/api.md "Sandbox models"), so a client's slow and failing paths can be tested; the model's
 * schema refuses `sandbox` for any model but a sandbox one.
 */
function gengateExtras(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body.sandbox !== undefined) out.sandbox = body.sandbox;
  if (body.webhook_url !== undefined) out.webhook_url = body.webhook_url;
  return out;
}
