import { t } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { MAX_MICRO, parseDecimalToMicro } from "../lib/money.ts";

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
  if (v > MAX_MICRO) throw new DomainError("validation_error", `${param} is too large.`, { param });
  return v;
}

export function decimalFromInput(value: string, param: string, allowNegative = false): bigint {
  const v = parseDecimalToMicro(value, { allowNegative });
  if (v === null) {
    throw new DomainError(
      "validation_error",
      `${param} must be a decimal with at most 6 places${allowNegative ? "" : ", above 0"}.`,
      { param },
    );
  }
  return v;
}

export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/**
 * `?limit=` and `?cursor=` of every listing. Declared as strings and checked by `paging()`, so
 * every bad value (-1, 0, 1.5, 1e30, 2^63, 101, "abc") gets the same 400 naming the parameter,
 * never Elysia's numeric coercion error.
 */
export const PagingQuery = {
  limit: t.Optional(
    t.String({
      description: `Page size: an integer from 1 to ${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
      examples: ["20"],
    }),
  ),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page." })),
};

/** Reads a raw cursor; null when it cannot be a next_cursor this listing issued. */
export type CursorParser<C> = (raw: string) => C | null;

/** Ledger cursors: a positive entry id that fits SQLite's signed 64-bit integers. */
export const sequenceCursor: CursorParser<bigint> = (raw) => {
  if (!/^[1-9][0-9]{0,18}$/.test(raw)) return null;
  const v = BigInt(raw);
  return v <= 2n ** 63n - 1n ? v : null;
};

/** Cursors that are ids of the listed objects, recognised by their shape. */
export const idCursor =
  (shape: RegExp): CursorParser<string> =>
  (raw) =>
    shape.test(raw) ? raw : null;

/** Validates a listing's `limit` and `cursor` (see PagingQuery); 400 validation_error naming the one at fault. */
export function paging<C>(
  query: { limit?: string; cursor?: string },
  parseCursor: CursorParser<C>,
): { limit: number; cursor: C | null } {
  let limit = PAGE_LIMIT_DEFAULT;
  if (query.limit !== undefined) {
    limit = /^[0-9]{1,3}$/.test(query.limit) ? Number(query.limit) : 0;
    if (limit < 1 || limit > PAGE_LIMIT_MAX) {
      throw new DomainError("validation_error", `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}.`, {
        param: "limit",
      });
    }
  }
  let cursor: C | null = null;
  if (query.cursor !== undefined && query.cursor !== "") {
    cursor = query.cursor.length <= 200 ? parseCursor(query.cursor) : null;
    if (cursor === null) {
      throw new DomainError("validation_error", "cursor must be the next_cursor of a previous page.", {
        param: "cursor",
      });
    }
  }
  return { limit, cursor };
}
