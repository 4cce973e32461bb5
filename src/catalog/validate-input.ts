import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import { DomainError, type ErrorDetail } from "../lib/errors.ts";
import type { Model } from "./model.ts";

// One Ajv for the process: operator schemas may use any draft-07 keyword; no type coercion,
// no defaults written into the input (pricing applies defaults itself, visibly).
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
const compiled = new WeakMap<Model, ValidateFunction>();

/** Compiles a model's input_schema; a schema Ajv cannot compile is a catalog error at load. */
export function compileInputSchema(model: Model): ValidateFunction {
  let fn = compiled.get(model);
  if (!fn) {
    fn = ajv.compile(model.input_schema);
    compiled.set(model, fn);
  }
  return fn;
}

/** Validates a model input against the model's input_schema: 400 validation_error with details. */
export function validateModelInput(model: Model, input: unknown): asserts input is Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new DomainError("validation_error", "The model input must be a JSON object.", { param: "input" });
  }
  const validate = compileInputSchema(model);
  if (validate(input)) return;
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
  return { path: base, message: e.message ?? "is invalid" };
}
