import type { Currency } from "../accounts/store.ts";
import { DomainError } from "../lib/errors.ts";
import { formatMicro, MAX_BALANCE_MICRO } from "../lib/money.ts";

/**
 * 400 validation_error for a credit that would take a balance above MAX_BALANCE_MICRO (see there
 * why); the body names the limit, also as `max_balance_micro`. Nothing is written.
 */
export function balanceLimitError(
  currency: Currency,
  balanceMicro: bigint,
  amountMicro: bigint,
): DomainError {
  return new DomainError(
    "validation_error",
    `A credit of ${formatMicro(amountMicro)} ${currency} would take the balance of ${formatMicro(balanceMicro)} above the maximum balance of ${formatMicro(MAX_BALANCE_MICRO)} ${currency}.`,
    { param: "amount", extra: { max_balance_micro: MAX_BALANCE_MICRO.toString() } },
  );
}

/** Whether `err` is a refusal by the maximum balance (balanceLimitError). */
export function isBalanceLimitError(err: unknown): err is DomainError {
  return err instanceof DomainError && err.extra?.max_balance_micro !== undefined;
}
