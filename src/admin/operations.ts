import {
  type Account,
  type AccountStore,
  accountView,
  type Currency,
  type KeyChanges,
  type KeyControls,
  keyView,
} from "../accounts/store.ts";
import { withMonthSpend } from "../accounts/summary.ts";
import { fxView, isFxCurrency } from "../fx/store.ts";
import { DomainError } from "../lib/errors.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import { rfc3339 } from "../lib/time.ts";
import { parseRate } from "../pricing/fx.ts";
import type { Services } from "../server/context.ts";

/**
 * Operator actions shared by the admin API, the console's operator pages and the CLI, so they
 * validate and record them the same way. Amounts are micro-units of the account's currency; every
 * money change is a ledger entry labelled ADMIN.
 */
export type OperatorDeps = Pick<Services, "sql" | "accounts" | "ledger" | "wallet" | "fx">;

/** An account as the operator sees it: the client's view, and whether (and why) it is disabled. */
export function adminAccountView(a: Account) {
  return { ...accountView(a), disabled_at: rfc3339(a.disabled_at), disabled_reason: a.disabled_reason };
}

/** One page of accounts, oldest first, as the operator lists them. */
export async function listAccountsPage(s: OperatorDeps, limit: number, after: string | null) {
  const { page, next_cursor } = keysetPage(await s.accounts.listAccounts(limit + 1, after), limit);
  return { data: page.map(adminAccountView), next_cursor };
}

export async function createAccountWithKey(
  s: OperatorDeps,
  input: { name: string; currency: Currency; creditMicro?: bigint | null },
) {
  return await s.sql.tx(async (tx) => {
    const accounts = s.accounts.in(tx);
    const created = await accounts.createAccount(input.name, input.currency);
    if (input.creditMicro && input.creditMicro > 0n)
      await s.ledger.in(tx).topUp(created.account.id, input.creditMicro, "initial credit");
    return {
      account: adminAccountView((await accounts.getAccount(created.account.id))!),
      key_id: created.keyId,
      key: created.key,
    };
  });
}

/** An operator's credit (ADMIN): every one records its reason (docs/api.md "Money", docs/billing.md). */
export async function creditAccount(s: OperatorDeps, accountId: string, amountMicro: bigint, reason: string) {
  await s.ledger.topUp(accountId, amountMicro, requireReason(reason, "A credit"));
  return adminAccountView((await s.accounts.getAccount(accountId))!);
}

/** The reason of an operator's money change: required for adjustments (and console credits), 500 chars. */
export function requireReason(reason: string | null | undefined, what = "An adjustment"): string {
  const text = (reason ?? "").trim();
  if (!text) throw new DomainError("validation_error", `${what} needs a reason.`, { param: "reason" });
  if (text.length > 500)
    throw new DomainError("validation_error", "The reason is longer than 500 characters.", {
      param: "reason",
    });
  return text;
}

export async function adjustAccount(s: OperatorDeps, accountId: string, deltaMicro: bigint, reason: string) {
  await s.ledger.adjust(accountId, deltaMicro, requireReason(reason));
  return adminAccountView((await s.accounts.getAccount(accountId))!);
}

export async function createKeyFor(
  s: OperatorDeps,
  accountId: string,
  input: { name?: string; monthlyLimitMicro?: bigint | null; canManage?: boolean } & KeyControls,
) {
  const { keyId, key } = await s.accounts.createKey(accountId, {
    ...input,
    name: input.name ?? "Key",
    monthlyLimitMicro: input.monthlyLimitMicro ?? null,
    canManage: input.canManage ?? false,
  });
  return { ...keyView(await s.accounts.getKey(accountId, keyId)), key_id: keyId, key };
}

/** An account as the operator sees it: the client's view (this month's spend included) and its keys. */
export async function showAccount(s: OperatorDeps, accountId: string) {
  const account = await requireAccount(s, accountId);
  return {
    ...(await withMonthSpend(s, account)),
    disabled_at: rfc3339(account.disabled_at),
    disabled_reason: account.disabled_reason,
    keys: (await s.accounts.listKeys(account.id)).map(keyView),
  };
}

export async function listAccountKeys(s: OperatorDeps, accountId: string) {
  await requireAccount(s, accountId);
  return (await s.accounts.listKeys(accountId)).map(keyView);
}

/** Any account's key; the last manage key included (see AccountStore.revokeKeyAsOperator). */
export async function revokeKeyAsOperator(s: OperatorDeps, keyId: string) {
  const key = await s.accounts.revokeKeyAsOperator(keyId);
  return { ...keyView(key), account_id: key.account_id };
}

/**
 * The operator's change of any account's key (admin API PATCH /admin/v1/keys/{id}, `gengate key
 * update`): the same changes as the account's own PATCH /v1/keys/{id}; unknown ids are 404.
 */
export async function updateKeyAsOperator(s: OperatorDeps, keyId: string, changes: KeyChanges) {
  const found = await s.accounts.findKey(keyId);
  if (!found) throw new DomainError("not_found", `No key ${keyId}.`, { param: "key_id" });
  const key = await s.accounts.updateKey(found.account_id, keyId, changes);
  return { ...keyView(key), account_id: key.account_id };
}

/** What disabling an account touches: its keys (the key cache, every instance) and its sessions. */
export type AccountStateDeps = Pick<Services, "accounts"> & {
  people: { sessions: Pick<Services["people"]["sessions"], "endAccountSessions"> };
};

/**
 * An operator disables an account (admin API, CLI, console), with a required reason: its keys are
 * 401 from the next request on, on every instance (a key change: AccountStore.setAccountDisabled),
 * and every console session looking at it ends. Its open jobs run to their end (their money is
 * held; docs/console.md "Disabling"). Unknown ids are 404.
 */
export async function disableAccount(
  s: AccountStateDeps,
  accountId: string,
  reason: string | null | undefined,
  /** The operator's own console session, kept (it falls back to another account, or to none). */
  exceptSessionId: string | null = null,
) {
  const text = requireReason(reason, "Disabling an account");
  const account = await s.accounts.setAccountDisabled(accountId, text);
  await s.people.sessions.endAccountSessions(accountId, exceptSessionId);
  return adminAccountView(account);
}

/** Enables a disabled account again: its keys work from the next request on. */
export async function enableAccount(s: AccountStateDeps, accountId: string) {
  return adminAccountView(await s.accounts.setAccountDisabled(accountId, null));
}

/** `currency` as given: only RUB has a rate (USD is the unit), anything else is 400 naming it. */
export async function setFxRate(s: OperatorDeps, currency: string, rateText: string, source: string) {
  if (!isFxCurrency(currency)) {
    throw new DomainError("validation_error", `currency must be RUB (got "${currency}").`, {
      param: "currency",
    });
  }
  return fxView(await s.fx.set(currency, parseRate(rateText), source));
}

export async function requireAccount(s: { accounts: Pick<AccountStore, "getAccount"> }, accountId: string) {
  const account = await s.accounts.getAccount(accountId);
  if (!account) throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
  return account;
}
