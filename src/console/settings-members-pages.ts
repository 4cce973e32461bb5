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
import { ACCOUNT_PATH, idParam, NEW_INVITE, ROTATED_SECRET, roleField } from "./settings-shared.ts";

type InviteShown = NonNullable<AccountState["invite"]>;

async function showAccount(kit: ConsoleKit, c: PageContext) {
  // One flash a session: a new invite link (invite) or a rotated webhook secret (rotate).
  const flash = await kit.people.sessions.takeFlashEntry<unknown>(c.session.sessionId);
  // The link or the secret itself replaces the "was shown once" notice of a reload.
  if (flash?.kind === NEW_INVITE)
    return await accountPage(kit, c, { invite: flash.data as InviteShown, notice: html`` });
  if (flash?.kind === ROTATED_SECRET)
    return await accountPage(kit, c, {
      secret: { value: (flash.data as { value: string }).value, rotated: true },
      notice: html``,
    });
  return await accountPage(kit, c, {});
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
