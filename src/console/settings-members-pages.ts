/**
 * The account settings page and its members (owners invite, change roles, remove; anyone may
 * leave). Thin: parse the form, call the people services (src/people/invites.ts, members.ts),
 * then redirect (303). A new invite link is kept for the session as a one-time flash and shown by
 * the page the redirect leads to (post/redirect/get: a reload shows nothing and invites no one). Owner-only actions call
 * requireOwner first (403 page for a member); the service checks the role again.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { html } from "../lib/html.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOwner,
} from "./kit.ts";
import { type AccountState, accountError, accountPage, removeForm } from "./settings-account-view.ts";
import { ACCOUNT_PATH, idParam, roleField } from "./settings-shared.ts";

/** The flash kind of a new invite link (src/people/sessions.ts setFlash). */
const NEW_INVITE = "new-invite";
type InviteShown = NonNullable<AccountState["invite"]>;

async function showAccount(kit: ConsoleKit, c: PageContext) {
  const invite = await kit.people.sessions.takeFlash<InviteShown>(c.session.sessionId, NEW_INVITE);
  // The link itself replaces the "was shown once" notice of a reload.
  return await accountPage(kit, c, invite ? { invite, notice: html`` } : {});
}

/** A one-time invite link into this account, shown once (and mailed with [smtp]). */
async function inviteMember(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  const role = roleField(field(c.form, "role") || "member");
  const email = field(c.form, "email").trim();
  if (!email) return accountError(kit, c, new DomainError("validation_error", "Enter an email address."));
  try {
    const made = await kit.people.invites.createInvite({
      email,
      accountId: s.accountId,
      role,
      createdBy: s.personId,
    });
    const shown: InviteShown = {
      url: made.url,
      email: email.toLowerCase(),
      role,
      expiresAt: made.expiresAt,
      mailed: made.mailed,
    };
    await kit.people.sessions.setFlash(s.sessionId, NEW_INVITE, shown);
    return redirect(`${ACCOUNT_PATH}?done=invited`);
  } catch (err) {
    return accountError(kit, c, err);
  }
}

async function changeRole(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  const personId = idParam(c.params, "personId", "member");
  const role = roleField(field(c.form, "role"));
  try {
    await kit.people.members.setRole(s.accountId, personId, role, s);
  } catch (err) {
    return accountError(kit, c, err);
  }
  return redirect(`${ACCOUNT_PATH}?done=role`);
}

async function removeMember(kit: ConsoleKit, c: ActionContext) {
  const s = requireOwner(c.session);
  const personId = idParam(c.params, "personId", "member");
  const member = await kit.people.members.getMember(s.accountId, personId);
  if (!member) throw new DomainError("not_found", "No such member.");
  if (field(c.form, "confirm") !== "yes") {
    // Without JavaScript the Remove button lands here: the same confirmation as the dialog.
    return c.layout({
      title: "Remove member",
      active: "settings",
      body: removeForm(s, member, personId === s.personId),
    });
  }
  try {
    await kit.people.members.removeMember(s.accountId, personId, s);
  } catch (err) {
    return accountError(kit, c, err);
  }
  return redirect(personId === s.personId ? "/console" : `${ACCOUNT_PATH}?done=removed`);
}

export function settingsMembersPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      ACCOUNT_PATH,
      kit.page((c) => showAccount(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/members/invite`,
      kit.action((c) => inviteMember(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/members/:personId/role`,
      kit.action((c) => changeRole(kit, c)),
    )
    .post(
      `${ACCOUNT_PATH}/members/:personId/remove`,
      kit.action((c) => removeMember(kit, c)),
    );
}
