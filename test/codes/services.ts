import type { Services } from "../../src/server/context.ts";
import { testServices } from "../helpers/services.ts";

/**
 * The codes fixture over the services alone (no HTTP), for tests of CodeService itself: a clock
 * (epoch seconds) the test moves and a RUB account besides "default" (USD). codesApp
 * (./helpers.ts) is the same over a whole in-process app, for the API's tests.
 */
export async function codesServices() {
  const clock = { now: 1_800_000_000 };
  return await withCodes(await testServices({ now: () => clock.now }), clock);
}

/** `t` (an app or the services) with the codes, the RUB account, the clock and a few shortcuts. */
export async function withCodes<T extends { ctx: Pick<Services, "accounts" | "codes"> }>(
  t: T,
  clock: { now: number },
) {
  const rub = await t.ctx.accounts.createAccount("roubles", "RUB");
  return {
    ...t,
    codes: t.ctx.codes,
    rub,
    now: () => clock.now,
    advance: (seconds: number) => {
      clock.now += seconds;
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
