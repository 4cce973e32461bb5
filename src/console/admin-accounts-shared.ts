/**
 * What the operator's account route groups share (admin-accounts-pages.ts: the list, an account,
 * credit and adjust; admin-account-actions-pages.ts: create, disable and enable, revoke a key): the
 * account id of the path, and the two pages they answer with, refilled after a refusal.
 */
import type { Account } from "../accounts/store.ts";
import { accountOverview } from "../admin/directory.ts";
import { keyFigures } from "../ledger/figures.ts";
import { DomainError } from "../lib/errors.ts";
import { html } from "../lib/html.ts";
import {
  type CreateAccountForm,
  type CreatedAccount,
  createAccountForm,
  createdSection,
  disableSection,
  keysSection,
} from "./admin-account-sections-view.ts";
import { accountDetailBody, accountsBody, type MoneyFormState } from "./admin-accounts-view.ts";
import { ACCOUNT_ID, adminPage, LIST_SIZE } from "./admin-view.ts";
import { type ConsoleKit, type PageContext, requireOperator } from "./kit.ts";

/** The flash kind of a new account's Default key and invite link (post/redirect/get). */
export const NEW_ACCOUNT = "operator-new-account";

export function accountIdParam(c: PageContext): string {
  const id = c.params.id ?? "";
  if (!ACCOUNT_ID.test(id)) throw new DomainError("not_found", `No account ${id}.`);
  return id;
}

/** The accounts list (or a search), with the `Create account` form (open and refilled after a refusal). */
export async function accountsList(
  c: PageContext,
  kit: ConsoleKit,
  create: CreateAccountForm = { name: "", currency: "", email: "", error: null },
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const q = (c.url.searchParams.get("q") ?? "").trim().slice(0, 200);
  const after = c.url.searchParams.get("after") ?? "";
  let rows: Account[];
  let next: string | null = null;
  if (q) {
    rows = await kit.ctx.accounts.searchAccounts(q, LIST_SIZE);
  } else {
    const cursor = ACCOUNT_ID.test(after) ? after : null;
    const got = await kit.ctx.accounts.listAccounts(LIST_SIZE + 1, cursor);
    rows = got.slice(0, LIST_SIZE);
    if (got.length > LIST_SIZE) next = rows[rows.length - 1]!.id;
  }
  const form = createAccountForm(c.session, create, kit.ctx.live.console.currency);
  return adminPage(c, "Accounts", "/console/admin", accountsBody(q, rows, next, form), status);
}

/** What an account's page shows besides its figures: refusals kept as typed, secrets shown once. */
export interface AccountPageState extends MoneyFormState {
  disable?: { reason: string; error: string | null };
  created?: CreatedAccount | null;
}

export async function accountDetail(
  c: PageContext,
  kit: ConsoleKit,
  state: AccountPageState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const id = accountIdParam(c);
  const { account, keys, members, entries } = await accountOverview(
    { accounts: kit.ctx.accounts, wallet: kit.ctx.wallet, people: kit.people },
    id,
  );
  const figures = await keyFigures(kit.ctx, id);
  const disable = disableSection(c.session, account, state.disable ?? { reason: "", error: null });
  // A disabled account says so under its name (why, since when, Enable); the form to disable is last.
  const disabled = account.disabled_at !== null;
  const body = html`${state.created ? createdSection(state.created) : null}
${accountDetailBody(c.session, account, keys, members, entries, state, disabled ? disable : null)}
${keysSection(c.session, account, figures, keys)}
${disabled ? null : disable}`;
  return adminPage(c, account.name, "/console/admin", body, status);
}
