import type Ajv from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import { importEntry } from "../lib/entries.ts";
import { DomainError, type ErrorDetail } from "../lib/errors.ts";
import { normalizeInputForms } from "./input-forms.ts";
import type { Model } from "./model.ts";

// One Ajv for the process: operator schemas may use any draft-07 keyword; no type coercion,
// no defaults written into the input (pricing applies defaults itself, visibly). Ajv is a separate
// entry of the binary, loaded by the first validation (src/lib/entries.ts): set up at start, it
// held 1.4 MB of idle memory (docs/performance.md, issue 19, fifth pass).
let ajv: Promise<Ajv> | null = null;
const compiled = new WeakMap<Model, ValidateFunction>();

function loadAjv(): Promise<Ajv> {
  ajv ??= importEntry<typeof import("../entries/ajv.ts")>("ajv").then(
    (m) => new m.default({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false }),
    (err: unknown) => {
      ajv = null; // a later call tries again
      throw err;
    },
  );
  return ajv;
}

/** Compiles a model's input_schema once per catalog snapshot's model. */
export async function compileInputSchema(model: Model): Promise<ValidateFunction> {
  let fn = compiled.get(model);
  if (!fn) {
    fn = (await loadAjv()).compile(model.input_schema);
    compiled.set(model, fn);
  }
  return fn;
}

/**
 * Validates a model input against the model's input_schema: 400 validation_error with details.
 * Returns the input with the value forms clients send made the schema's (normalizeInputForms):
 * the input to price, store and run.
 */
export async function validateModelInput(model: Model, raw: unknown): Promise<Record<string, unknown>> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new DomainError("validation_error", "The model input must be a JSON object.", { param: "input" });
  }
  const input = normalizeInputForms(model, raw) as Record<string, unknown>;
  const validate = await compileInputSchema(model);
  if (validate(input)) return input;
  const details = (validate.errors ?? []).slice(0, 20).map(detailOf);
  throw new DomainError(
    "validation_error",
    `Invalid input for ${model.id}: ${details[0]?.path} ${details[0]?.message}.`,
    {
      details,
      param: details[0]?.path,
    },
  );
}

function detailOf(e: ErrorObject): ErrorDetail {
  const base = `input${e.instancePath.replaceAll("/", ".")}`;
  if (e.keyword === "additionalProperties") {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return { path: `${base}.${extra}`, message: "is not a field of this model" };
  }
  if (e.keyword === "required") {
    return {
      path: `${base}.${(e.params as { missingProperty: string }).missingProperty}`,
      message: "is required",
    };
  }
  if (e.keyword === "enum") {
    const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
    return { path: base, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}` };
  }
  return { path: base, message: e.message ?? "is invalid" };
}
