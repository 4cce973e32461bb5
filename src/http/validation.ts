import { Value } from "@sinclair/typebox/value";
import type { ValidationError } from "elysia";
import { DomainError, type ErrorDetail } from "../lib/errors.ts";

/** At most this many failures are listed in `details`. */
const MAX_DETAILS = 20;

interface SchemaFailure {
  path: string;
  message: string;
  type?: number;
}

/**
 * Turns Elysia's TypeBox validation error into the contract's 400 with one detail per failure.
 *
 * It never touches the offending value: Elysia's own summaries (`error.all`) interpolate it into a
 * string, which throws for `{"toString": 1}` and overflows the stack on deep arrays. The failures
 * are read from the validator's iterator instead, with TypeBox's value-free messages. Query
 * failures name the bare parameter (`limit`), body ones the field path (`body.model_id`).
 */
export function validationToDomainError(error: ValidationError): DomainError {
  const where = error.type;
  const details: ErrorDetail[] = [];
  for (const f of failures(error)) {
    const field = f.path.replace(/^\//, "").replaceAll("/", ".");
    const path = where === "query" && field ? field : field ? `${where}.${field}` : where;
    details.push({ path, message: f.message });
    if (details.length >= MAX_DETAILS) break;
  }
  const first = details[0];
  const subject = where === "body" || where === "query" ? `request ${where}` : "request";
  return new DomainError(
    "validation_error",
    first ? `Invalid ${first.path}: ${first.message}` : `The ${subject} is invalid.`,
    { details, ...(first ? { param: first.path } : {}) },
  );
}

function* failures(error: ValidationError): Generator<SchemaFailure> {
  try {
    const validator = error.validator as
      | { Errors?: (v: unknown) => Iterable<SchemaFailure> }
      | Parameters<typeof Value.Errors>[0];
    const it =
      validator &&
      typeof validator === "object" &&
      "Errors" in validator &&
      typeof validator.Errors === "function"
        ? validator.Errors(error.value)
        : Value.Errors(validator as Parameters<typeof Value.Errors>[0], error.value as never);
    for (const f of it) {
      if (f && typeof f.path === "string" && typeof f.message === "string") yield f;
    }
  } catch {
    // A validator that cannot describe its failure: the caller answers with the generic message.
  }
}
