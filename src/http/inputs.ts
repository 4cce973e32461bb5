import { t } from "elysia";
import { MAX_MICRO, parseDecimalToMicro } from "../lib/money.ts";
import { ApiError } from "./errors.ts";

/**
 * Input helpers shared by routes. Money arrives as strings: integer micro-units ("12500000") in
 * `*_micro` fields, or decimals in the account currency ("12.50") in `amount` fields.
 */
export const MicroInput = t.String({
  pattern: "^[0-9]{1,19}$",
  description: "Integer micro-units as a string.",
});
export const DecimalInput = t.String({
  pattern: "^-?[0-9]{1,13}(\\.[0-9]{1,6})?$",
  description: 'Decimal amount in the account currency, e.g. "12.50".',
});

export function microFromInput(value: string, param: string): bigint {
  const v = BigInt(value);
  if (v > MAX_MICRO) throw new ApiError("validation_error", `${param} is too large.`, { param });
  return v;
}

export function decimalFromInput(value: string, param: string, allowNegative = false): bigint {
  const v = parseDecimalToMicro(value, { allowNegative });
  if (v === null) {
    throw new ApiError(
      "validation_error",
      `${param} must be a decimal with at most 6 places${allowNegative ? "" : ", above 0"}.`,
      { param },
    );
  }
  return v;
}

/** `?limit=` 1..100 (default 20). */
export const LimitQuery = t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1 }));
