/**
 * The operator's account actions (issue 34): `Create account` (name, currency, an optional owner
 * to invite; post/redirect/get to the new account, whose Default key and invite link are shown once
 * from the session's flash), `Disable account` with a required reason and `Enable account`, and
 * revoking any of the account's keys after a confirmation. The same services as the admin API and
 * the CLI (src/admin/operations.ts, the invite service); every route starts with requireOperator.
 */
import { Elysia } from "elysia";
import type { Currency } from "../accounts/store.ts";
import {
  createAccountWithKey,
  disableAccount,
  enableAccount,
  requireAccount,
  revokeKeyAsOperator,
} from "../admin/operations.ts";
import { DomainError } from "../lib/errors.ts";
import { checkEmail } from "../people/common.ts";
import { type CreatedAccount, revokePageBody } from "./admin-account-sections-view.ts";
import { accountDetail, accountIdParam, accountsList, NEW_ACCOUNT } from "./admin-accounts-shared.ts";
import { adminPage, shown } from "./admin-view.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

async function createAccount(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const form = {
    name: field(c.form, "name").trim().slice(0, 200),
    currency: field(c.form, "currency").slice(0, 10),
    email: field(c.form, "email").trim().slice(0, 254),
  };
  try {
    if (form.name.length < 1 || form.name.length > 100)
      throw new DomainError("validation_error", "Name must be 1 to 100 characters.", { param: "name" });
    if (form.currency !== "USD" && form.currency !== "RUB")
      throw new DomainError("validation_error", "Currency must be USD or RUB.", { param: "currency" });
    // Checked before the account exists: a typo in the email creates nothing.
    const email = form.email === "" ? null : checkEmail(form.email);
    const made = await createAccountWithKey(kit.ctx, {
      name: form.name,
      currency: form.currency as Currency,
    });
    let invite: CreatedAccount["invite"] = null;
    if (email !== null) {
      const i = await kit.people.invites.createInvite({
        email,
        accountId: made.account.id,
        role: "owner",
        operator: false,
        createdBy: c.session.personId,
      });
      invite = { email, url: i.url, expiresAt: i.expiresAt, mailed: i.mailed };
    }
    const created: CreatedAccount = { key: made.key, invite };
    await kit.people.sessions.setFlash(c.session.sessionId, NEW_ACCOUNT, created);
    return redirect(`/console/admin/accounts/${made.account.id}?done=created`);
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return await accountsList(c, kit, { ...form, error: s.message }, s.status);
  }
}

async function setDisabled(c: ActionContext, kit: ConsoleKit, disable: boolean): Promise<Response> {
  requireOperator(c.session);
  const id = accountIdParam(c);
  await requireAccount(kit.ctx, id);
  if (!disable) {
    await enableAccount(kit.ctx, id);
    return redirect(`/console/admin/accounts/${id}?done=enabled`);
  }
  const reason = field(c.form, "reason");
  try {
    await disableAccount(kit.ctx, id, reason, c.session.sessionId);
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return await accountDetail(
      c,
      kit,
      { disable: { reason: reason.slice(0, 500), error: s.message } },
      s.status,
    );
  }
  return redirect(`/console/admin/accounts/${id}?done=disabled`);
}

/** The account's key of the path (another account's key id is 404 here). */
async function accountKey(c: PageContext, kit: ConsoleKit) {
  const id = accountIdParam(c);
  const account = await requireAccount(kit.ctx, id);
  const keyId = c.params.keyId ?? "";
  if (!/^key_[0-9A-Za-z]{8,64}$/.test(keyId)) throw new DomainError("not_found", `No key ${keyId}.`);
  return { account, row: await kit.ctx.accounts.getKey(id, keyId) };
}

async function confirmRevoke(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const { account, row } = await accountKey(c, kit);
  return adminPage(c, "Revoke key", "/console/admin", revokePageBody(c.session, account, row));
}

/** Any key of the account, the last manage key included (as the admin API and `gengate key revoke`). */
async function revokeKey(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const { account, row } = await accountKey(c, kit);
  await revokeKeyAsOperator(kit.ctx, row.id);
  return redirect(`/console/admin/accounts/${account.id}?done=revoked`);
}

export function adminAccountActionsPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/admin/accounts",
      kit.action((c) => createAccount(c, kit)),
    )
    .post(
      "/console/admin/accounts/:id/disable",
      kit.action((c) => setDisabled(c, kit, true)),
    )
    .post(
      "/console/admin/accounts/:id/enable",
      kit.action((c) => setDisabled(c, kit, false)),
    )
    .get(
      "/console/admin/accounts/:id/keys/:keyId/revoke",
      kit.page((c) => confirmRevoke(c, kit)),
    )
    .post(
      "/console/admin/accounts/:id/keys/:keyId/revoke",
      kit.action((c) => revokeKey(c, kit)),
    );
}
