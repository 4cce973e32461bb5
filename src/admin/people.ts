import { DomainError } from "../lib/errors.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import { rfc3339 } from "../lib/time.ts";
import type { InviteService, InviteView } from "../people/invites.ts";
import type { MemberService, PersonView } from "../people/members.ts";
import type { ResetService } from "../people/resets.ts";
import { requireReason } from "./operations.ts";

/**
 * The operator's side of console people (/admin/v1/users, /people, /invites): the people services'
 * answers as the admin API shows them (snake_case, RFC 3339 times), one page at a time.
 */
export interface AdminPeopleDeps {
  people: {
    invites: Pick<InviteService, "createInvite" | "listInvites" | "revokeInvite" | "getInvite">;
    resets: Pick<ResetService, "requestPasswordReset">;
    members: Pick<MemberService, "listPeople" | "setDisabled">;
  };
}

export function personView(p: PersonView) {
  return {
    id: p.id,
    object: "person" as const,
    email: p.email,
    operator: p.operator,
    two_factor: p.twoFactor,
    has_password: p.hasPassword,
    created_at: rfc3339(p.createdAt)!,
    disabled_at: rfc3339(p.disabledAt),
    disabled_reason: p.disabledReason,
    memberships: p.memberships.map((m) => ({ account_id: m.accountId, role: m.role })),
  };
}

export function inviteView(i: InviteView) {
  return {
    id: i.id,
    object: "invite" as const,
    email: i.email,
    account_id: i.accountId,
    role: i.role,
    operator: i.operator,
    created_by: i.createdBy,
    created_at: rfc3339(i.createdAt)!,
    expires_at: rfc3339(i.expiresAt)!,
    used_at: rfc3339(i.usedAt),
    used_by: i.usedBy,
    revoked_at: rfc3339(i.revokedAt),
    state: i.state,
  };
}

/** An invite made by the operator: the one-time link (never stored), its expiry, whether it was mailed. */
export async function inviteByOperator(
  deps: AdminPeopleDeps,
  input: { email: string; accountId: string | null; role?: "owner" | "member"; operator: boolean },
) {
  const invite = await deps.people.invites.createInvite(input);
  return { url: invite.url, expires_at: rfc3339(invite.expiresAt)!, mailed: invite.mailed };
}

/** A reset link for a person; unlike the console's own reset page, an unknown email is 404 here. */
export async function passwordResetByOperator(deps: AdminPeopleDeps, email: string) {
  const reset = await deps.people.resets.requestPasswordReset(email);
  if (!reset) throw new DomainError("not_found", "No person with this email.", { param: "email" });
  return { url: reset.url, mailed: reset.mailed };
}

export async function listPeoplePage(deps: AdminPeopleDeps, limit: number, after: string | null) {
  const { page, next_cursor } = keysetPage(
    await deps.people.members.listPeople({ limit: limit + 1, after }),
    limit,
  );
  return { data: page.map(personView), next_cursor };
}

export async function listInvitesPage(deps: AdminPeopleDeps, limit: number, after: string | null) {
  const { page, next_cursor } = keysetPage(
    await deps.people.invites.listInvites({ limit: limit + 1, after }),
    limit,
  );
  return { data: page.map(inviteView), next_cursor };
}

/** Revokes an unused invite (a used or unknown one is 404) and shows it as it is now. */
export async function revokeInviteByOperator(deps: AdminPeopleDeps, id: string) {
  await deps.people.invites.revokeInvite(id);
  return inviteView((await deps.people.invites.getInvite(id))!);
}

/**
 * An operator disables a person (with a required reason) or enables them again: a disabled person
 * cannot sign in (the failed sign-in answer) and every session of theirs ends at once, in every
 * account. Their accounts and keys are untouched (an account has its own switch).
 */
export async function setPersonDisabledByOperator(
  deps: AdminPeopleDeps,
  personId: string,
  disable: { reason: string | null | undefined } | null,
) {
  const reason = disable === null ? null : requireReason(disable.reason, "Disabling a person");
  return personView(await deps.people.members.setDisabled(personId, reason));
}
