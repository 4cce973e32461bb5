/**
 * The operator's people and invites (/console/admin/people): invite a person (into an account or a
 * new one), revoke an invite, make a password-reset link (links are shown once); disable a person
 * (a required reason) or enable them again. Through the people
 * services (src/people/); the page's reads through src/admin/directory.ts. HTML in admin-people-view.ts.
 */
import { Elysia } from "elysia";
import { peopleDirectory } from "../admin/directory.ts";
import { setPersonDisabledByOperator } from "../admin/people.ts";
import { PERSON_ID } from "../admin/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import type { Role } from "../people/types.ts";
import { type PeopleState, peopleBody } from "./admin-people-view.ts";
import { ACCOUNT_ID, adminPage, LIST_SIZE, shown } from "./admin-view.ts";
import { formatTime } from "./format.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  type PageContext,
  redirect,
  requireOperator,
} from "./kit.ts";

const INVITE_ID = /^inv_[0-9A-Za-z]{8,64}$/;

const untilText = (epochSeconds: number) => `It works until ${formatTime(epochSeconds)}.`;

async function peoplePage(
  c: PageContext,
  kit: ConsoleKit,
  state: PeopleState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const after = c.url.searchParams.get("after") ?? "";
  const directory = await peopleDirectory(
    { accounts: kit.ctx.accounts, wallet: kit.ctx.wallet, people: kit.people },
    LIST_SIZE,
    after,
  );
  const body = peopleBody(c.session, directory, state);
  return adminPage(c, "People and invites", "/console/admin/people", body, status);
}

/** The flash kind of an operator's new invite link (post/redirect/get, src/people/sessions.ts). */
const NEW_INVITE = "operator-invite";
const DONE: Record<string, string> = {
  disabled: "The person is disabled: they cannot sign in and every session of theirs ended.",
  enabled: "The person is enabled: they may sign in again.",
  revoked: "The invite is revoked.",
  invited: "The invite link was created. It was shown once and cannot be shown again.",
};

async function showPeople(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const link = await kit.people.sessions.takeFlash<PeopleState["link"]>(c.session.sessionId, NEW_INVITE);
  if (link) return await peoplePage(c, kit, { link });
  return await peoplePage(c, kit, { done: DONE[c.url.searchParams.get("done") ?? ""] ?? null });
}

async function createInvite(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const invite = {
    email: field(c.form, "email").trim().slice(0, 254),
    account: field(c.form, "account").trim().slice(0, 80),
    role: field(c.form, "role"),
    operator: field(c.form, "operator") !== "",
  };
  try {
    if (invite.account && !ACCOUNT_ID.test(invite.account))
      throw new DomainError("validation_error", "Account must be an account id (acct_…) or empty.");
    if (invite.role !== "owner" && invite.role !== "member")
      throw new DomainError("validation_error", 'The role must be "owner" or "member".');
    if (!invite.email) throw new DomainError("validation_error", "An invite needs an email.");
    const made = await kit.people.invites.createInvite({
      email: invite.email,
      accountId: invite.account || null,
      role: invite.role as Role,
      operator: invite.operator,
      createdBy: c.session.personId,
    });
    await kit.people.sessions.setFlash(c.session.sessionId, NEW_INVITE, {
      label: `The invite link for ${invite.email}.${made.mailed ? " It is also being emailed to that address." : ""}`,
      url: made.url,
      expires: untilText(made.expiresAt),
    });
    return redirect("/console/admin/people?done=invited");
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return peoplePage(c, kit, { invite, inviteError: s.message }, s.status);
  }
}

async function revokeInvite(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const id = c.params.id ?? "";
  if (!INVITE_ID.test(id)) throw new DomainError("not_found", `No unused invite ${id}.`);
  await kit.people.invites.revokeInvite(id);
  return redirect("/console/admin/people?done=revoked");
}

async function resetLink(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const email = field(c.form, "email").trim().slice(0, 320);
  const reset = email ? await kit.people.resets.requestPasswordReset(email) : null;
  if (!reset) return peoplePage(c, kit, { resetError: `No person with the email ${email}.` }, 404);
  return peoplePage(c, kit, {
    link: {
      label: `The password reset link for ${email}.${reset.mailed ? " It is also being emailed to the person." : ""} Setting a password through it signs them out everywhere.`,
      url: reset.url,
      expires: "It works for 1 hour.",
    },
  });
}

/** Disable (a required reason) or enable a person, through the admin API's operation; never oneself. */
async function setPersonDisabled(c: ActionContext, kit: ConsoleKit, disable: boolean): Promise<Response> {
  requireOperator(c.session);
  const id = c.params.id ?? "";
  if (!PERSON_ID.test(id)) throw new DomainError("not_found", "No such person.");
  try {
    if (disable && id === c.session.personId)
      throw new DomainError("conflict", "You cannot disable yourself; another operator can.");
    await setPersonDisabledByOperator(kit.ctx, id, disable ? { reason: field(c.form, "reason") } : null);
  } catch (err) {
    const s = shown(err);
    if (!s) throw err;
    return peoplePage(c, kit, { personError: s.message }, s.status);
  }
  return redirect(`/console/admin/people?done=${disable ? "disabled" : "enabled"}`);
}

export function adminPeoplePages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/admin/people",
      kit.page((c) => showPeople(c, kit)),
    )
    .post(
      "/console/admin/invites",
      kit.action((c) => createInvite(c, kit)),
    )
    .post(
      "/console/admin/invites/:id/revoke",
      kit.action((c) => revokeInvite(c, kit)),
    )
    .post(
      "/console/admin/reset",
      kit.action((c) => resetLink(c, kit)),
    )
    .post(
      "/console/admin/people/:id/disable",
      kit.action((c) => setPersonDisabled(c, kit, true)),
    )
    .post(
      "/console/admin/people/:id/enable",
      kit.action((c) => setPersonDisabled(c, kit, false)),
    );
}
