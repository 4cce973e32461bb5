import { DomainError } from "../lib/errors.ts";

/**
 * Readers of the whole-number fields pricing depends on (duration, num_images, width, ...).
 * They run on raw client JSON, possibly before schema validation, so every wrong shape
 * ("5", 2.5, -1, 1e20, NaN, null) becomes a 400 validation_error naming the field, never a
 * crash and never a float that leaks into money. A field is "omitted" only when absent:
 * null is a wrong type, as JSON Schema would say.
 */

export type Input = Record<string, unknown>;

/** The model input as an object; anything else cannot be priced field by field. */
export function asInput(input: unknown): Input {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new DomainError("validation_error", "The model input must be a JSON object.", { param: "input" });
  }
  return input as Input;
}

/** Short, safe rendering of a rejected value for an error message. */
function shown(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}...` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return Array.isArray(value) ? "an array" : `a value of type ${typeof value}`;
}

export interface IntegerRule {
  min: number;
  /** Upper bound, inclusive; null means only the safe-integer bound applies. */
  max: number | null;
  /** What the number counts, for messages: "seconds", "images", "pixels". */
  noun: string;
  /** Why the max exists, appended to the message, e.g. "this model's max". */
  maxLabel?: string;
}

/** A present field that must be a safe integer in [min, max]; returned as bigint for money math. */
export function readInteger(value: unknown, param: string, rule: IntegerRule): bigint {
  const range = rule.max === null ? `at least ${rule.min}` : `from ${rule.min} to ${rule.max}`;
  const label = rule.max !== null && rule.maxLabel ? ` (${rule.maxLabel})` : "";
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new DomainError(
      "validation_error",
      `${param} must be a whole number of ${rule.noun} ${range}${label}; got ${shown(value)}.`,
      { param },
    );
  }
  if (value < rule.min || (rule.max !== null && value > rule.max)) {
    throw new DomainError(
      "validation_error",
      `${param} must be ${range} ${rule.noun}${label}; got ${value}.`,
      {
        param,
      },
    );
  }
  return BigInt(value);
}
