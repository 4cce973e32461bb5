import { makeTestApp } from "../helpers/context.ts";

/** An in-process app whose clock (epoch seconds) the test moves, with a RUB account besides "default" (USD). */
export function codesApp() {
  let now = 1_800_000_000;
  const t = makeTestApp({ now: () => now });
  const rub = t.ctx.accounts.createAccount("roubles", "RUB");
  return {
    ...t,
    codes: t.ctx.codes,
    rub,
    now: () => now,
    advance: (seconds: number) => {
      now += seconds;
    },
    balance: (accountId: string) => t.ctx.accounts.getAccount(accountId)!.balance_micro,
    /** One batch of `count` USD codes of `amount` (decimal), returned with its codes. */
    batch: (amount = "10", count = 1, extra: { currency?: string; expires?: string; note?: string } = {}) =>
      t.ctx.codes.createBatchFrom({ amount, currency: extra.currency ?? "USD", count, ...extra }),
  };
}
