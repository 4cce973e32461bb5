import { makeTestApp } from "../helpers/context.ts";

/** An in-process app whose clock (epoch seconds) the test moves, with a RUB account besides "default" (USD). */
export async function codesApp() {
  let now = 1_800_000_000;
  const t = await makeTestApp({ now: () => now });
  const rub = await t.ctx.accounts.createAccount("roubles", "RUB");
  return {
    ...t,
    codes: t.ctx.codes,
    rub,
    now: () => now,
    advance: (seconds: number) => {
      now += seconds;
    },
    balance: async (accountId: string) => (await t.ctx.accounts.getAccount(accountId))!.balance_micro,
    /** One batch of `count` USD codes of `amount` (decimal), returned with its codes. */
    batch: async (
      amount = "10",
      count = 1,
      extra: { currency?: string; expires?: string; note?: string } = {},
    ) => await t.ctx.codes.createBatchFrom({ amount, currency: extra.currency ?? "USD", count, ...extra }),
  };
}
