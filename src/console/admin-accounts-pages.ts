/**
 * The operator's accounts (/console/admin, /console/admin/accounts/:id): search and list, one
 * account's figures, credit and adjust with a required reason through the admin API's operations
 * (src/admin/operations.ts); reads through src/admin/directory.ts. HTML in admin-accounts-view.ts.
 */
import { Elysia } from "elysia";
import type { Account } from "../accounts/store.ts";
import { accountOverview } from "../admin/directory.ts";
import {
  creditAccount,
  adjustAccount as doAdjust,
  requireAccount as operatorAccount,
  requireReason,
} from "../admin/operations.ts";
import { decimalFromInput } from "../http/inputs.ts";
import { DomainError } from "../lib/errors.ts";
import { formatMicro } from "../lib/money.ts";
import { accountDetailBody, accountsBody, type MoneyFormState } from "./admin-accounts-view.ts";
import { ACCOUNT_ID, adminPage, LIST_SIZE, shown } from "./admin-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

async function accountsPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
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
  const body = accountsBody(q, rows, next);
  return adminPage(c, "Accounts", "/console/admin", body);
}

function accountIdParam(c: PageContext): string {
  const id = c.params.id ?? "";
  if (!ACCOUNT_ID.test(id)) throw new DomainError("not_found", `No account ${id}.`);
  return id;
}

async function accountDetail(
  c: PageContext,
  kit: ConsoleKit,
  state: MoneyFormState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const {
    account: a,
    keys,
    members,
    entries,
  } = await accountOverview(
    { accounts: kit.ctx.accounts, wallet: kit.ctx.wallet, people: kit.people },
    accountIdParam(c),
  );
  const body = accountDetailBody(c.session, a, keys, members, entries, state);
  return adminPage(c, a.name, "/console/admin", body, status);
}

async function accountPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const done = (c.url.searchParams.get("done") ?? "").slice(0, 200);
  // Only our own redirect's wording is shown back.
  return await accountDetail(c, kit, {
    done: /^(Credited|Adjusted by) -?[0-9.]+ [A-Z]{3}\.$/.test(done) ? done : null,
  });
}

/** Credit (a positive amount) or adjust (signed) the account, with the required reason. */
async function changeMoney(c: ActionContext, kit: ConsoleKit, kind: "credit" | "adjust"): Promise<Response> {
  requireOperator(c.session);
  const id = accountIdParam(c);
  await operatorAccount(kit.ctx, id);
  const amount = field(c.form, "amount").trim().slice(0, 100);
  const reason = field(c.form, "reason");
  try {
    const text = requireReason(reason, kind === "credit" ? "A credit" : "An adjustment");
    const micro = decimalFromInput(amount, "amount", kind === "adjust");
    const after =
      kind === "credit"
        ? await creditAccount(kit.ctx, id, micro, text)
        : await doAdjust(kit.ctx, id, micro, text);
    const done = `${kind === "credit" ? "Credited" : "Adjusted by"} ${formatMicro(micro)} ${after.currency}.`;
    return redirect(`/console/admin/accounts/${id}?done=${encodeURIComponent(done)}`);
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return await accountDetail(
      c,
      kit,
      { [kind]: { amount, reason: reason.slice(0, 500), error: s.message } },
      s.status,
    );
  }
}

export function adminAccountsPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin",
      kit.page((c) => accountsPage(c, kit)),
    )
    .get(
      "/console/admin/accounts/:id",
      kit.page((c) => accountPage(c, kit)),
    )
    .post(
      "/console/admin/accounts/:id/credit",
      kit.action((c) => changeMoney(c, kit, "credit")),
    )
    .post(
      "/console/admin/accounts/:id/adjust",
      kit.action((c) => changeMoney(c, kit, "adjust")),
    );
}
