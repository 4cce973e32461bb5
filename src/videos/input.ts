/**
 * OpenAI's video request mapped onto a catalog model's own input (docs/clients.md "OpenAI videos"):
 * `prompt`, `seconds` and `size` become the fields the model's input_schema has (`prompt` or
 * `text`, `duration`, `resolution` / `aspect_ratio` / `width` and `height`), `input_reference` its
 * `image_url`. Any other field is passed to the model as it is, and its schema judges it.
 */
import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";

type Schema = { type?: string; enum?: unknown[]; properties?: Record<string, Schema> };
type Fields = Record<string, unknown>;

/** The catalog kinds the videos door runs. */
export const VIDEO_KINDS: readonly string[] = ["video", "avatar"];

/** The fields OpenAI defines; everything else goes to the model unchanged. */
const OPENAI_FIELDS = ["model", "prompt", "seconds", "size", "input_reference"] as const;

function properties(model: Model): Record<string, Schema> {
  return ((model.input_schema as Schema).properties ?? {}) as Record<string, Schema>;
}

function stringEnum(s: Schema | undefined): string[] | null {
  if (!s?.enum) return null;
  const values = s.enum.filter((v): v is string => typeof v === "string");
  return values.length > 0 ? values : null;
}

/** "16:9" -> [16, 9]; null for anything else. */
function ratio(aspect: string): [number, number] | null {
  const m = /^(\d{1,3}):(\d{1,3})$/.exec(aspect);
  if (!m) return null;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return a > 0 && b > 0 ? [a, b] : null;
}

/**
 * A tier's frame at an aspect ratio: the short side is the tier's lines, the long side rounded to
 * an even number (480p 16:9 is 854x480, 720p 1280x720, 1080p 1920x1080: the usual frames).
 */
export function frameOf(tier: string, aspect: string): string | null {
  const lines = /^(\d{3,4})p$/.exec(tier);
  const r = ratio(aspect);
  if (!lines || !r) return null;
  const p = Number(lines[1]);
  const [a, b] = r;
  const long = (x: number) => Math.round(x / 2) * 2;
  return a >= b ? `${long((p * a) / b)}x${p}` : `${p}x${long((p * b) / a)}`;
}

/** The model's tiers ("480p", ...) and aspect ratios, as its input schema or the catalog lists them. */
function sizeAxes(model: Model): { tiers: string[] | null; aspects: string[] | null } {
  const p = properties(model);
  const tiers = p.resolution ? (stringEnum(p.resolution) ?? model.resolutions) : null;
  const aspects = p.aspect_ratio ? stringEnum(p.aspect_ratio) : null;
  return {
    tiers: tiers?.filter((t) => /^\d{3,4}p$/.test(t)) ?? null,
    aspects: aspects?.filter((a) => ratio(a) !== null) ?? null,
  };
}

/** Where no aspect ratio is chosen, the model's landscape default (the sandbox renders 16:9). */
const NOMINAL_ASPECT = "16:9";
/** Where a model lists aspect ratios but no tiers, its frames are named at this tier. */
const NOMINAL_TIER = "720p";

/**
 * Every `size` the model can make, with the input fields each becomes: its tiers times its aspect
 * ratios; tiers alone at 16:9; aspect ratios alone at 720p. Empty when the model has neither.
 */
export function allowedSizes(model: Model): Map<string, Fields> {
  const { tiers, aspects } = sizeAxes(model);
  const out = new Map<string, Fields>();
  for (const tier of tiers ?? [NOMINAL_TIER]) {
    for (const aspect of aspects ?? [NOMINAL_ASPECT]) {
      if (!tiers && !aspects) continue;
      const frame = frameOf(tier, aspect);
      if (frame && !out.has(frame)) {
        out.set(frame, {
          ...(tiers ? { resolution: tier } : {}),
          ...(aspects ? { aspect_ratio: aspect } : {}),
        });
      }
    }
  }
  return out;
}

/** The `size` a job's input stands for (OpenAI's "WxH"), or null when the model takes no size. */
export function sizeOfInput(model: Model | undefined, input: Fields): string | null {
  if (typeof input.width === "number" && typeof input.height === "number")
    return `${input.width}x${input.height}`;
  const axes = model ? sizeAxes(model) : { tiers: null, aspects: null };
  const tier = typeof input.resolution === "string" ? input.resolution : (axes.tiers?.[0] ?? null);
  const aspect =
    typeof input.aspect_ratio === "string"
      ? input.aspect_ratio
      : axes.aspects?.includes(NOMINAL_ASPECT)
        ? NOMINAL_ASPECT
        : (axes.aspects?.[0] ?? null);
  if (tier === null && aspect === null) return null;
  return frameOf(tier ?? NOMINAL_TIER, aspect ?? NOMINAL_ASPECT);
}

function refuse(param: string, message: string): DomainError {
  return new DomainError("validation_error", message, { param });
}

/** `seconds` ("8", "8s" or 8) as the model's duration field takes it. */
function durationOf(model: Model, schema: Schema | undefined, raw: unknown): unknown {
  const m = /^(\d{1,5})s?$/.exec(typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw : "");
  if (!m) throw refuse("seconds", 'seconds must be a whole number of seconds, such as "4" or "8".');
  const n = Number(m[1]);
  if (!schema) throw refuse("seconds", `${model.id} takes no duration; omit seconds.`);
  const listed = stringEnum(schema);
  if (listed) {
    const v = listed.find((x) => x === `${n}` || x === `${n}s`);
    if (v === undefined)
      throw refuse("seconds", `seconds must be one of ${listed.join(", ")} for ${model.id}.`);
    return v;
  }
  if (n < 1 || (model.max !== null && n > model.max))
    throw refuse("seconds", `seconds must be from 1 to ${model.max ?? n} for ${model.id}.`);
  return schema.type === "string" ? `${n}` : n;
}

/** `size` "WxH" as the model's fields: one of allowedSizes, or width/height where the model takes them. */
function sizeFields(model: Model, raw: unknown): Fields {
  const m = typeof raw === "string" ? /^(\d{2,5})x(\d{2,5})$/.exec(raw) : null;
  if (!m) throw refuse("size", 'size must be "WIDTHxHEIGHT" in pixels, such as "1280x720".');
  const p = properties(model);
  if (p.width && p.height) return { width: Number(m[1]), height: Number(m[2]) };
  const sizes = allowedSizes(model);
  if (sizes.size === 0) throw refuse("size", `${model.id} takes no size; omit size.`);
  const fields = sizes.get(`${Number(m[1])}x${Number(m[2])}`);
  if (!fields)
    throw refuse("size", `${model.id} cannot make ${raw}; use one of: ${[...sizes.keys()].join(", ")}.`);
  return fields;
}

/** `input_reference`: a file id or URL, or OpenAI's {file_id} / {image_url}. */
function referenceOf(raw: unknown): string {
  if (typeof raw === "string" && raw !== "") return raw;
  if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
    const o = raw as Fields;
    const v = o.file_id ?? o.image_url;
    if (typeof v === "string" && v !== "") return v;
  }
  throw refuse(
    "input_reference",
    "input_reference must be an uploaded file, a file id or {file_id} / {image_url}.",
  );
}

/**
 * The model input of an OpenAI video request. `reference`: the file id of an input_reference sent
 * as a file (stored first), which wins over one given as a field.
 */
export function modelInputOf(model: Model, fields: Fields, reference: string | null): Fields {
  const p = properties(model);
  const input: Fields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (!(OPENAI_FIELDS as readonly string[]).includes(k)) input[k] = v;
  }
  if (fields.prompt !== undefined) {
    // Avatars speak their `text`: the prompt is what they say.
    const key = p.prompt ? "prompt" : p.text ? "text" : null;
    if (key === null) throw refuse("prompt", `${model.id} takes no prompt.`);
    input[key] = fields.prompt;
  }
  if (fields.seconds !== undefined) input.duration = durationOf(model, p.duration, fields.seconds);
  if (fields.size !== undefined) Object.assign(input, sizeFields(model, fields.size));
  const ref =
    reference ?? (fields.input_reference !== undefined ? referenceOf(fields.input_reference) : null);
  if (ref !== null) {
    if (!p.image_url) throw refuse("input_reference", `${model.id} takes no image input.`);
    input.image_url = ref;
  }
  return input;
}

/**
 * A multipart form's text fields as the JSON the SDKs would have sent: bracketed names nested
 * (`input_reference[file_id]`, `sandbox[delay_ms]`, `tags[]`), and each value given the type the
 * model's schema declares for it (forms carry only strings). Bounded: 64 fields, 4 levels.
 */
export function formFields(entries: Iterable<[string, string]>, model: Model | undefined): Fields {
  const root: Fields = {};
  let count = 0;
  for (const [name, value] of entries) {
    if (++count > 64) throw refuse("body", "The form has more than 64 fields.");
    const m = /^([^[\]]+)((?:\[[^[\]]*\]){0,4})$/.exec(name);
    if (!m) throw refuse(name.slice(0, 64), `The form field name ${name.slice(0, 64)} is not understood.`);
    const path = [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!)];
    if (path.some((k) => FORBIDDEN_KEYS.includes(k)))
      throw refuse("body", "A form field name is not allowed.");
    let at: Fields = root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!;
      const last = i === path.length - 1;
      const nextIsArray = !last && path[i + 1] === "";
      if (key === "") {
        // `name[]`: append to the array the parent holds.
        continue;
      }
      if (last) {
        at[key] = value;
      } else if (nextIsArray) {
        const arr = Array.isArray(at[key]) ? (at[key] as unknown[]) : [];
        arr.push(value);
        at[key] = arr;
        break;
      } else {
        if (at[key] === null || typeof at[key] !== "object" || Array.isArray(at[key])) at[key] = {};
        at = at[key] as Fields;
      }
    }
  }
  return model ? (typed(root, model.input_schema as Schema) as Fields) : root;
}

const FORBIDDEN_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf"];

/** A form value given its schema's type: integers, numbers and booleans from their text. */
function typed(v: unknown, schema: Schema | undefined): unknown {
  if (Array.isArray(v)) return v.map((x) => typed(x, (schema as { items?: Schema } | undefined)?.items));
  if (v !== null && typeof v === "object") {
    const props = schema?.properties ?? {};
    return Object.fromEntries(
      Object.entries(v as Fields).map(([k, x]) => [
        k,
        typed(x, Object.hasOwn(props, k) ? props[k] : undefined),
      ]),
    );
  }
  if (typeof v !== "string" || !schema) return v;
  if ((schema.type === "integer" || schema.type === "number") && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (schema.type === "boolean" && (v === "true" || v === "false")) return v === "true";
  return v;
}
