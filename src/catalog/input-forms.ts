import { DomainError } from "../lib/errors.ts";
import type { Model } from "./model.ts";

/**
 * The value forms real clients send, made the forms a model's input schema declares, before the
 * schema check and before pricing (so `"5s"` is priced as `5`). Clients disagree on a value's
 * form, not its meaning: fal's AI SDK provider sends a video's duration as `"5s"` and a size as
 * `image_size` (`{width, height}` or a name), OpenAI's clients send seconds as `"4"`. Each rule
 * applies only where the model's schema declares the target form (the default schemas do; an
 * operator's own `input_schema` that declares `duration` as a string keeps its strings), and a form
 * whose meaning is not clear is refused with a message naming the accepted ones.
 */

/** fal's named image sizes (fal's ImageSize enum: the flux endpoints' `image_size`). */
export const FAL_IMAGE_SIZES: Readonly<Record<string, readonly [number, number]>> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};

/** Fields that count whole seconds. */
const SECONDS_FIELDS = ["duration", "input_duration_sec"] as const;
/** `5`, `"5"`, `"5s"`, `"5 sec"`, `"5 seconds"`: at most 6 digits, far above any model's max. */
const SECONDS = /^\s*(\d{1,6})\s*(?:s|sec|secs|seconds)?\s*$/i;
const WXH = /^\s*(\d{1,5})\s*[xX]\s*(\d{1,5})\s*$/;
/** Names of one format that clients spell two ways. */
const FORMAT_ALIASES: Readonly<Record<string, string>> = { jpg: "jpeg" };

type Props = Record<string, { type?: unknown; enum?: unknown } | undefined>;

function propsOf(model: Model): Props {
  const props = (model.input_schema as { properties?: unknown }).properties;
  return typeof props === "object" && props !== null ? (props as Props) : {};
}

function shown(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 24 ? `${value.slice(0, 24)}...` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}

function refuse(field: string, message: string): never {
  throw new DomainError("validation_error", `input.${field} ${message}`, {
    param: `input.${field}`,
    details: [{ path: `input.${field}`, message }],
  });
}

/**
 * The input with every accepted value form made the schema's form (a new object; the argument is
 * not changed). Anything not an object is returned as is, for the schema check to refuse.
 */
export function normalizeInputForms(model: Model, input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const props = propsOf(model);
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const field of SECONDS_FIELDS) {
    if (props[field]?.type === "integer" && out[field] !== undefined) out[field] = seconds(field, out[field]);
  }
  if (
    out.image_size !== undefined &&
    !props.image_size &&
    isInteger(props.width) &&
    isInteger(props.height)
  ) {
    const [width, height] = imageSize(out.image_size);
    for (const [field, value] of [
      ["width", width],
      ["height", height],
    ] as const) {
      if (out[field] !== undefined && out[field] !== value) {
        refuse("image_size", `is ${width}x${height} but ${field} is ${shown(out[field])}: give one of them.`);
      }
    }
    delete out.image_size;
    out.width = width;
    out.height = height;
  }
  const formats = props.output_format?.enum;
  if (out.output_format !== undefined && Array.isArray(formats)) {
    out.output_format = outputFormat(out.output_format, formats as unknown[]);
  }
  return out;
}

function isInteger(p: { type?: unknown } | undefined): boolean {
  return p?.type === "integer";
}

function seconds(field: string, value: unknown): unknown {
  if (typeof value === "number") return value; // the schema checks its range and wholeness
  const m = typeof value === "string" ? SECONDS.exec(value) : null;
  if (!m) refuse(field, `must be a whole number of seconds: 5, "5" or "5s"; got ${shown(value)}.`);
  return Number(m[1]);
}

const SIZE_FORMS = `one of ${Object.keys(FAL_IMAGE_SIZES).join(", ")}, {"width": W, "height": H} or "WxH"`;

function imageSize(value: unknown): [number, number] {
  if (typeof value === "string") {
    const named = FAL_IMAGE_SIZES[value];
    if (named) return [named[0], named[1]];
    const m = WXH.exec(value);
    if (m) return [Number(m[1]), Number(m[2])];
  } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const { width, height, ...rest } = value as Record<string, unknown>;
    if (Number.isSafeInteger(width) && Number.isSafeInteger(height) && Object.keys(rest).length === 0) {
      return [width as number, height as number];
    }
  }
  return refuse("image_size", `must be ${SIZE_FORMS}; got ${shown(value)}.`);
}

function outputFormat(value: unknown, accepted: unknown[]): unknown {
  const name = typeof value === "string" ? value.trim().toLowerCase() : null;
  const canonical = name === null ? null : (FORMAT_ALIASES[name] ?? name);
  if (canonical !== null && accepted.includes(canonical)) return canonical;
  return refuse(
    "output_format",
    `must be one of ${accepted.map(String).join(", ")} (what this model can produce); got ${shown(value)}.`,
  );
}
