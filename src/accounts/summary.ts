import type { Ledger } from "../ledger/ledger.ts";
import type { Wallet } from "../ledger/wallet.ts";
import { DomainError } from "../lib/errors.ts";
import { type Account, type AccountStore, accountView } from "./store.ts";

export interface AccountSummaryDeps {
  accounts: Pick<AccountStore, "getAccount">;
  ledger: Pick<Ledger, "currentMonth">;
  wallet: Pick<Wallet, "monthTotal">;
}

/** An account with the current month (the ledger's clock) and what it spent in it. */
export async function withMonthSpend(deps: AccountSummaryDeps, account: Account) {
  const month = deps.ledger.currentMonth();
  return {
    ...accountView(account),
    month,
    month_spent_micro: (await deps.wallet.monthTotal(account.id, month)).toString(),
  };
}

/** GET /v1/account's body (also after a redeem): the key's account, this month and its spend. */
export async function accountBody(deps: AccountSummaryDeps, accountId: string) {
  const account = await deps.accounts.getAccount(accountId);
  if (!account) throw new DomainError("unauthorized", "The key's account no longer exists.");
  return await withMonthSpend(deps, account);
}
