/**
 * The studio's model form: fields rendered from a catalog model's `input_schema`, and the submitted
 * form read back into the model input. Validation is the API's own (`validateModelInput`, the same
 * Ajv schema a submit enforces); this file only turns form text into typed values.
 *
 * Field names are the input's names (`num_images`); a nested object's fields are `parent.child`
 * (`sandbox.fail`). Each field is labelled by its schema `title`, else by its name made readable
 * (`num_images` -> "Num images", `image_url` -> "Image URL"; docs/console.md, "Accessible names"),
 * and its `description`, bounds and default are a hint tied to the control by aria-describedby.
 *
 *   enum                 -> <select> (first option empty: the field is omitted)
 *   integer / number     -> <input type=number> with the schema's min, max and step
 *   boolean              -> checkbox (ticked: true; unticked: omitted, the model's default)
 *   string               -> <input> or, for long texts, <textarea>; URL fields (`*_url`) also get an
 *                           <input type=file> whose upload (files store) puts its file_id in the field
 *   object with fields   -> a <fieldset> of its fields, one level deep
 *   anything else        -> a <textarea> holding JSON
 *
 * An empty field is omitted from the input (the model's default applies, as for an API caller who
 * leaves it out).
 */
import type { Model } from "../catalog/model.ts";
import { validateModelInput } from "../catalog/validate-input.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";

/** What a form read needs: FormData, URLSearchParams, or anything with get(). */
export interface FormLike {
  get(name: string): unknown;
}

/** Per-field error messages, keyed by field name (`""` for the input as a whole). */
export type FieldErrors = Record<string, string>;

export type StudioFormResult =
  | { ok: true; input: Record<string, unknown> }
  | { ok: false; input: Record<string, unknown>; errors: FieldErrors };

type Schema = Record<string, unknown>;

/** One renderable field of a model's form. */
export interface StudioField {
  /** The form field's name (the input's): `prompt`, `sandbox.fail`. */
  name: string;
  /** What the field is labelled: its schema's title, else its own name made readable. */
  label: string;
  /** The path in the input object. */
  path: [string] | [string, string];
  schema: Schema;
  required: boolean;
  control: "select" | "number" | "checkbox" | "text" | "textarea" | "url" | "json";
}

const LONG_TEXT = 200;

function propertiesOf(schema: unknown): Record<string, Schema> {
  const p = (schema as Schema | null)?.properties;
  return p && typeof p === "object" ? (p as Record<string, Schema>) : {};
}

function requiredOf(schema: unknown): Set<string> {
  const r = (schema as Schema | null)?.required;
  return new Set(Array.isArray(r) ? r.filter((x): x is string => typeof x === "string") : []);
}

/** Words spelled otherwise in a label: `image_url` -> "Image URL". */
const ACRONYMS: Record<string, string> = { url: "URL", uri: "URI", id: "ID", fps: "FPS", cfg: "CFG" };
/** A title longer than this is cut: an operator's schema is not a place for paragraphs. */
const MAX_LABEL = 80;

/**
 * An input name as a person reads it: `num_images` -> "Num images", `delayMs` -> "Delay ms",
 * `image_url` -> "Image URL". Never the raw snake_case (issue 34: labels read like an internal tool).
 */
export function humanName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[\s_.-]+/)
    .filter(Boolean)
    .map((w) => ACRONYMS[w.toLowerCase()] ?? w.toLowerCase());
  if (words.length === 0) return name;
  const first = words[0]!;
  words[0] = first === first.toUpperCase() ? first : first[0]!.toUpperCase() + first.slice(1);
  return words.join(" ");
}

/** A schema's label: its `title` (trimmed, at most MAX_LABEL characters), else `name` made readable. */
export function labelOf(name: string, s: Schema | undefined): string {
  const title = typeof s?.title === "string" ? s.title.trim() : "";
  return title ? title.slice(0, MAX_LABEL) : humanName(name);
}

function typeOf(s: Schema): string | null {
  const t = s.type;
  if (typeof t === "string") return t;
  // ["integer", "null"] and the like: the first non-null type.
  if (Array.isArray(t)) return (t.find((x) => x !== "null") as string | undefined) ?? null;
  return null;
}

/** Whether an input field holds a URL (or a gengate file id): `image_url`, `audio_url`, `format: uri`. */
export function isUrlField(name: string, s: Schema): boolean {
  return typeOf(s) === "string" && (/_url$/.test(name) || s.format === "uri" || s.format === "url");
}

function controlOf(name: string, s: Schema): StudioField["control"] {
  if (Array.isArray(s.enum)) return "select";
  const t = typeOf(s);
  if (t === "integer" || t === "number") return "number";
  if (t === "boolean") return "checkbox";
  if (t === "string") {
    if (isUrlField(name, s)) return "url";
    const max = typeof s.maxLength === "number" ? s.maxLength : Number.POSITIVE_INFINITY;
    return max > LONG_TEXT ? "textarea" : "text";
  }
  return "json";
}

/** The fields of a model's form, in the schema's order (nested objects flattened one level). */
export function studioFields(model: Model): StudioField[] {
  const out: StudioField[] = [];
  const required = requiredOf(model.input_schema);
  for (const [name, s] of Object.entries(propertiesOf(model.input_schema))) {
    const inner = propertiesOf(s);
    if (typeOf(s) === "object" && Object.keys(inner).length > 0) {
      const innerRequired = requiredOf(s);
      for (const [child, cs] of Object.entries(inner)) {
        const childControl = controlOf(child, cs);
        out.push({
          name: `${name}.${child}`,
          label: labelOf(child, cs),
          path: [name, child],
          schema: cs,
          required: required.has(name) && innerRequired.has(child),
          control: childControl,
        });
      }
      continue;
    }
    out.push({
      name,
      label: labelOf(name, s),
      path: [name],
      schema: s,
      required: required.has(name),
      control: controlOf(name, s),
    });
  }
  return out;
}

function valueAt(input: Record<string, unknown>, path: StudioField["path"]): unknown {
  const top = input[path[0]];
  if (path.length === 1) return top;
  return top && typeof top === "object" ? (top as Record<string, unknown>)[path[1]] : undefined;
}

function setAt(input: Record<string, unknown>, path: StudioField["path"], value: unknown): void {
  if (path.length === 1) {
    input[path[0]] = value;
    return;
  }
  if (!input[path[0]]) input[path[0]] = {};
  (input[path[0]] as Record<string, unknown>)[path[1]] = value;
}

/** The text a field shows for a value of the input (empty when omitted). */
function textOf(f: StudioField, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (f.control === "json") return JSON.stringify(v, null, 2);
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * A run's input as the form would show it: each filled field's label, name and text, in the form's
 * order (the run page's "Input"); fields the model's schema no longer has come last, by name.
 */
export function inputEntries(
  model: Model | null,
  input: Record<string, unknown>,
): { name: string; label: string; text: string }[] {
  const fields = model ? studioFields(model) : [];
  const groups = model ? propertiesOf(model.input_schema) : {};
  const out: { name: string; label: string; text: string }[] = [];
  const seen = new Set<string>();
  for (const f of fields) {
    seen.add(f.path[0]);
    const text = textOf(f, valueAt(input, f.path));
    // A nested field names its group, as its fieldset's legend does on the form: "Sandbox: Delay ms".
    const label = f.path.length === 2 ? `${labelOf(f.path[0], groups[f.path[0]])}: ${f.label}` : f.label;
    if (text !== "") out.push({ name: f.name, label, text });
  }
  for (const [name, v] of Object.entries(input)) {
    if (seen.has(name) || v === undefined || v === null) continue;
    out.push({ name, label: humanName(name), text: typeof v === "string" ? v : JSON.stringify(v) });
  }
  return out;
}

/**
 * The name of a URL field's file input (`upload:image_url`): sent only without the script, in the
 * form's multipart body (app.js uploads the file itself and drops the name), and stored by
 * studioFormUploads before the form is read.
 */
export function uploadFieldName(name: string): string {
  return `upload:${name}`;
}

/** Element ids of a field: `f-sandbox-fail`; names are schema keys, so they are sanitised. */
export function fieldId(name: string): string {
  return `f-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;
}

function hintOf(f: StudioField): string {
  const parts: string[] = [];
  if (typeof f.schema.description === "string") parts.push(f.schema.description);
  const min = f.schema.minimum;
  const max = f.schema.maximum;
  if (f.control === "number" && (min !== undefined || max !== undefined)) {
    parts.push(
      min !== undefined && max !== undefined
        ? `${min} to ${max}.`
        : min !== undefined
          ? `At least ${min}.`
          : `At most ${max}.`,
    );
  }
  if (f.schema.default !== undefined) parts.push(`Default ${JSON.stringify(f.schema.default)}.`);
  if (f.control === "url") parts.push("An http(s) URL or a file id; or choose a file to upload.");
  if (f.required) parts.push("Required.");
  return parts.join(" ");
}

export interface RenderOptions {
  /** The current input (typed values), e.g. what was submitted. */
  values?: Record<string, unknown>;
  /** Raw field texts that could not be read (shown as typed, next to their error). */
  raw?: Record<string, string>;
  errors?: FieldErrors;
}

/** One field: label (its title, else its readable name), hint, control, error. */
function renderField(f: StudioField, o: RenderOptions): SafeHtml {
  const id = fieldId(f.name);
  const error = o.errors?.[f.name];
  const hint = hintOf(f);
  const value = o.raw?.[f.name] ?? textOf(f, valueAt(o.values ?? {}, f.path));
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const aria = html`${describedBy ? html` aria-describedby="${describedBy}"` : null}${error ? html` aria-invalid="true"` : null}`;
  const s = f.schema;
  const num = (k: string) => (typeof s[k] === "number" ? String(s[k]) : null);
  let control: SafeHtml;
  switch (f.control) {
    case "select": {
      const options = (s.enum as unknown[]).map((e) => {
        const text = typeof e === "string" ? e : JSON.stringify(e);
        return html`<option value="${text}"${text === value ? html` selected` : null}>${text}</option>`;
      });
      control = html`<select id="${id}" name="${f.name}"${aria}><option value="">${f.required ? "(choose)" : "(default)"}</option>${options}</select>`;
      break;
    }
    case "number": {
      const step = typeOf(s) === "integer" ? "1" : "any";
      const min = num("minimum");
      const max = num("maximum");
      control = html`<input id="${id}" name="${f.name}" type="number" inputmode="${step === "1" ? "numeric" : "decimal"}" step="${step}"${min !== null ? html` min="${min}"` : null}${max !== null ? html` max="${max}"` : null}${s.default !== undefined ? html` placeholder="${String(s.default)}"` : null} value="${value}"${aria}>`;
      break;
    }
    case "checkbox":
      control = html`<input id="${id}" name="${f.name}" type="checkbox" value="true"${value === "true" ? html` checked` : null}${aria}>`;
      break;
    case "textarea":
    case "json":
      control = html`<textarea id="${id}" name="${f.name}" rows="${f.control === "json" ? 4 : 3}"${num("maxLength") !== null && f.control === "textarea" ? html` maxlength="${num("maxLength")}"` : null}${aria}>${value}</textarea>`;
      break;
    case "url":
      // The drop zone (app.js `data-drop-zone`): drag a file onto it or pick one; a preview, then
      // the upload into the text field. Without the script the plain file input goes with the
      // form (multipart) and is stored when it is run or estimated (studioFormUploads).
      control = html`<input id="${id}" name="${f.name}" type="text" inputmode="url" autocomplete="off" spellcheck="false"${num("maxLength") !== null ? html` maxlength="${num("maxLength")}"` : null} value="${value}"${aria}>
<div class="drop-zone" data-drop-zone><label class="hint" for="${id}-file">Upload a file for ${f.label}</label>
<input id="${id}-file" name="${uploadFieldName(f.name)}" type="file" accept="image/*,video/*,audio/*" data-upload="${id}" data-upload-status="${id}-upload" data-upload-preview="${id}-preview">
<p class="hint drop-hint" data-drop-hint hidden>or drop a file here</p>
<div class="upload-preview" id="${id}-preview"></div></div>
<span class="hint" id="${id}-upload" role="status"></span>`;
      break;
    default:
      control = html`<input id="${id}" name="${f.name}" type="text" autocomplete="off"${num("maxLength") !== null ? html` maxlength="${num("maxLength")}"` : null} value="${value}"${aria}>`;
  }
  const wrap = f.control === "checkbox" ? "field check-field" : "field";
  return html`<div class="${wrap}">
<label for="${id}">${f.label}</label>
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : null}
${control}
${error ? html`<span class="field-error" id="${id}-error">${error}</span>` : null}
</div>`;
}

/** The model's fields (no <form>: the page wraps them), nested objects as fieldsets. */
export function renderStudioFields(model: Model, o: RenderOptions = {}): SafeHtml {
  const fields = studioFields(model);
  const parts: SafeHtml[] = [];
  const general = o.errors?.[""];
  if (general) parts.push(html`<p class="notice error" role="alert">${general}</p>`);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.path.length === 1) {
      parts.push(renderField(f, o));
      continue;
    }
    const group = f.path[0];
    const members: StudioField[] = [];
    while (i < fields.length && fields[i]!.path.length === 2 && fields[i]!.path[0] === group) {
      members.push(fields[i]!);
      i++;
    }
    i--;
    const groupSchema = propertiesOf(model.input_schema)[group];
    const desc = groupSchema?.description;
    parts.push(html`<fieldset class="field-group"><legend>${labelOf(group, groupSchema)}</legend>
${typeof desc === "string" ? html`<p class="hint">${desc}</p>` : null}
${members.map((m) => renderField(m, o))}
${o.errors?.[group] ? html`<span class="field-error">${o.errors[group]}</span>` : null}
</fieldset>`);
  }
  return html`${parts}`;
}

/** Reads one field's text into its typed value; throws a message for text that is not of the type. */
function readValue(f: StudioField, text: string): unknown {
  switch (f.control) {
    case "select": {
      const match = (f.schema.enum as unknown[]).find(
        (e) => (typeof e === "string" ? e : JSON.stringify(e)) === text,
      );
      if (match === undefined) throw new Error("is not one of the allowed values");
      return match;
    }
    case "number": {
      const t = text.trim();
      const integer = typeOf(f.schema) === "integer";
      const ok = integer ? /^-?\d{1,16}$/.test(t) : /^-?\d{1,16}(\.\d{1,16})?([eE][-+]?\d{1,3})?$/.test(t);
      if (!ok) throw new Error(integer ? "must be a whole number" : "must be a number");
      const n = Number(t);
      if (!Number.isSafeInteger(n) && integer) throw new Error("must be a whole number");
      return n;
    }
    case "checkbox":
      if (text !== "true") throw new Error("must be ticked or not");
      return true;
    case "json":
      try {
        return JSON.parse(text);
      } catch {
        throw new Error("must be JSON");
      }
    default:
      return text;
  }
}

/**
 * The form's text read into the model input, without the schema check: empty fields are omitted,
 * numbers and booleans typed. What the estimate prices (as /v1/estimate does, it does not require
 * every field) and what the snippets show. Errors are fields whose text is not of their type.
 */
export function readStudioForm(
  model: Model,
  form: FormLike,
): { input: Record<string, unknown>; errors: FieldErrors; raw: Record<string, string> } {
  const input: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  const raw: Record<string, string> = {};
  for (const f of studioFields(model)) {
    const v = form.get(f.name);
    if (typeof v !== "string") continue; // absent (or a file in a text field): omitted
    const text = f.control === "textarea" || f.control === "json" ? v : v.trim();
    if (text.trim() === "") continue;
    try {
      setAt(input, f.path, readValue(f, text));
    } catch (e) {
      errors[f.name] = (e as Error).message;
      raw[f.name] = v;
    }
  }
  return { input, errors, raw };
}

/** The form field an API error path names (`input.sandbox.fail` -> `sandbox.fail`), or `""`. */
export function fieldOfParam(model: Model, param: string | undefined): string {
  if (!param) return "";
  const name = param.replace(/^input\.?/, "");
  const names = new Set(studioFields(model).map((f) => f.name));
  if (names.has(name)) return name;
  const top = name.split(".")[0]!;
  return names.has(top) || studioFields(model).some((f) => f.path[0] === top) ? top : "";
}

/** Files the schema check does not see (e.g. "is not a field of this model") go to the top. */
function addError(errors: FieldErrors, field: string, message: string): void {
  if (!errors[field]) errors[field] = message;
}

/**
 * The submitted form as the model's input, checked by the API's own schema validation
 * (validateModelInput). On failure, the errors are per field, in the API's words.
 */
export async function parseStudioForm(model: Model, form: FormLike): Promise<StudioFormResult> {
  const { input, errors } = readStudioForm(model, form);
  if (Object.keys(errors).length > 0) return { ok: false, input, errors };
  try {
    await validateModelInput(model, input);
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
    const details = err.details ?? [];
    if (details.length === 0) addError(errors, fieldOfParam(model, err.param), err.message);
    for (const d of details) {
      const field = fieldOfParam(model, d.path);
      addError(errors, field, field === "" ? `${d.path} ${d.message}` : d.message);
    }
    return { ok: false, input, errors };
  }
  return { ok: true, input };
}
