import { ProviderError } from "../types.ts";

/** `{{field}}`, with optional spaces inside the braces; field names are identifiers. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const EXACT = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

/**
 * Input fields whose http(s) URL values are uploaded to ComfyUI before the prompt is queued
 * (LoadImage and friends read files from ComfyUI's input folder, not URLs): `image`, `mask`, and
 * names ending in `_image`, `_mask`, `image_url` or `mask_url` (init_image, reference_image_url...).
 */
export function isImageField(field: string): boolean {
  return /(^|_)(image|mask)(_?url)?$/.test(field);
}

/** Every placeholder name used in a template's string values (object keys are not templated). */
export function placeholders(template: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      for (const m of v.matchAll(PLACEHOLDER)) found.add(m[1]!);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x);
    } else if (v !== null && typeof v === "object") {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(template);
  return found;
}

/** The `properties` of a model's input_schema (JSON Schema), or {} when it has none. */
export function schemaProperties(schema: Record<string, unknown>): Record<string, unknown> {
  const p = schema.properties;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

/**
 * The value a placeholder takes: the input's value, else the `default` of the field in the model's
 * input_schema, else ProviderError("input") naming the field. null counts as missing.
 */
export function fieldValue(
  field: string,
  input: Record<string, unknown>,
  schema: Record<string, unknown>,
): unknown {
  const v = input[field];
  if (v !== undefined && v !== null) return v;
  const prop = schemaProperties(schema)[field];
  if (prop !== null && typeof prop === "object" && "default" in prop) {
    const d = (prop as { default: unknown }).default;
    if (d !== undefined && d !== null) return d;
  }
  throw new ProviderError("input", `The input has no value for "${field}", which the workflow needs.`);
}

const asText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * A filled deep copy of a workflow template (the template is never modified). A string that is
 * exactly `"{{field}}"` becomes the value with its JSON type (a number stays a number); a
 * placeholder inside a longer string is replaced by the value's text (strings as is, anything
 * else as JSON). `overrides` take precedence over the input (uploaded image names).
 */
export function fillTemplate(
  template: unknown,
  input: Record<string, unknown>,
  schema: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): unknown {
  const value = (field: string) =>
    Object.hasOwn(overrides, field) ? overrides[field] : fieldValue(field, input, schema);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      const exact = EXACT.exec(v);
      if (exact) return structuredClone(value(exact[1]!));
      return v.replace(PLACEHOLDER, (_m, field: string) => asText(value(field)));
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(template);
}

/**
 * Why a template is not an API-format workflow ({"<node id>": {class_type, inputs}}), or null.
 * The UI format (with `nodes` and `links`) is the common mistake.
 */
export function workflowShapeProblem(template: unknown): string | null {
  if (template === null || typeof template !== "object" || Array.isArray(template)) {
    return "must be an API-format workflow object (ComfyUI: Workflow > Export (API))";
  }
  const t = template as Record<string, unknown>;
  if (Array.isArray(t.nodes) && "links" in t) {
    return "is in ComfyUI's UI format; export it with Workflow > Export (API) instead";
  }
  const entries = Object.entries(t);
  if (entries.length === 0) return "has no nodes";
  for (const [id, node] of entries) {
    const n = node as { class_type?: unknown; inputs?: unknown } | null;
    if (n === null || typeof n !== "object" || typeof n.class_type !== "string") {
      return `node "${id}" has no class_type (not an API-format workflow)`;
    }
    if (n.inputs !== undefined && (n.inputs === null || typeof n.inputs !== "object")) {
      return `node "${id}".inputs must be an object`;
    }
  }
  return null;
}
