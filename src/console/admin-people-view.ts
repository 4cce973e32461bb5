/**
 * The operator's people page HTML (admin-people-pages.ts): the invite form, a link just made (shown
 * once), the people with their accounts and a reset-link button each, and the invites.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import type { InviteView } from "../people/invites.ts";
import type { PersonView } from "../people/members.ts";
import type { ConsoleSession } from "../people/types.ts";
import { notice } from "./admin-view.ts";
import { formatTime } from "./format.ts";
import { formError } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { tableBox } from "./money-view.ts";

export interface PeopleState {
  /** A link just made (invite or reset), shown once. */
  link?: { label: string; url: string; expires: string } | null;
  inviteError?: string | null;
  resetError?: string | null;
  /** A refused disable (no reason, oneself). */
  personError?: string | null;
  invite?: { email: string; account: string; role: string; operator: boolean };
  done?: string | null;
}

export interface PeopleDirectory {
  people: PersonView[];
  next: string | null;
  invites: InviteView[];
  /** Account id -> name, for every account the people and invites name. */
  names: Map<string, string>;
}

/** `Enable` for a disabled person; else `Disable`, which asks for the required reason (no script needed). */
function personSwitch(session: ConsoleSession, p: PersonView): SafeHtml | null {
  if (p.id === session.personId) return null;
  if (p.disabledAt !== null)
    return html`<form method="post" action="/console/admin/people/${p.id}/enable">
    ${csrfField(session)}
    <button type="submit" class="secondary" aria-label="Enable ${p.email}">Enable</button>
  </form>`;
  return html`<details class="person-disable"><summary aria-label="Disable ${p.email}">Disable</summary>
  <form method="post" action="/console/admin/people/${p.id}/disable" class="stack">
    ${csrfField(session)}
    <label>Reason <input name="reason" required maxlength="500" autocomplete="off"></label>
    <button type="submit" class="danger" aria-label="Disable person ${p.email}">Disable person</button>
  </form></details>`;
}

export function peopleBody(session: ConsoleSession, d: PeopleDirectory, state: PeopleState): SafeHtml {
  const { people, next, invites, names } = d;
  const nameOf = (id: string | null) => (id === null ? "a new account" : (names.get(id) ?? id));
  const inv = state.invite ?? { email: "", account: "", role: "member", operator: false };
  const link = state.link
    ? html`<div class="notice warn" role="status">
  <p>${state.link.label} Copy it now: it is shown only once. ${state.link.expires}</p>
  <div class="copy-row">
    <label class="visually-hidden" for="new-link">One-time link</label>
    <input id="new-link" type="text" readonly value="${state.link.url}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-link" hidden>Copy</button>
  </div>
</div>`
    : null;
  return html`<h1>People and invites</h1>
${notice(state.done ?? null)}
${link}
<h2 id="invite-heading">Invite a person</h2>
<form class="stack" method="post" action="/console/admin/invites" aria-labelledby="invite-heading">
  ${csrfField(session)}
  ${formError(state.inviteError)}
  <label>Email <input type="email" name="email" required maxlength="254" value="${inv.email}" autocomplete="off"></label>
  <label>Account <span class="hint">An account id (acct_…) to join; empty: accepting the invite creates a new account with the person as owner.</span>
    <input name="account" maxlength="80" value="${inv.account}" autocomplete="off"></label>
  <label>Role <select name="role">
    <option value="member"${inv.role === "member" ? html` selected` : null}>member</option>
    <option value="owner"${inv.role === "owner" ? html` selected` : null}>owner</option>
  </select></label>
  <label class="check"><input type="checkbox" name="operator" value="1"${inv.operator ? html` checked` : null}> Operator (sees these pages)</label>
  <button type="submit">Create invite</button>
</form>

<h2>People</h2>
${formError(state.resetError)}
${formError(state.personError)}
${
  people.length
    ? tableBox(
        "People",
        html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Accounts</th><th scope="col">Operator</th><th scope="col">Two-factor</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
<tbody>${people.map(
          (p) => html`<tr>
  <td>${p.email}${p.hasPassword ? null : html` <span class="hint">(invited)</span>`}${p.disabledAt !== null ? html` <span class="hint">(disabled: ${p.disabledReason ?? ""})</span>` : null}</td>
  <td>${p.memberships.length ? p.memberships.map((m, i) => html`${i ? ", " : null}<a href="/console/admin/accounts/${m.accountId}">${nameOf(m.accountId)}</a> (${m.role})`) : "—"}</td>
  <td>${p.operator ? "yes" : "no"}</td>
  <td>${p.twoFactor ? "on" : "off"}</td>
  <td>${formatTime(p.createdAt)}</td>
  <td><form method="post" action="/console/admin/reset">
    ${csrfField(session)}
    <input type="hidden" name="email" value="${p.email}">
    <button type="submit" class="secondary" aria-label="Password reset link for ${p.email}">Reset link</button>
  </form>
  ${personSwitch(session, p)}</td>
</tr>`,
        )}</tbody></table>`,
      )
    : html`<p>No people yet.</p>`
}
${next ? html`<p><a class="button secondary" href="/console/admin/people?after=${next}">Next</a></p>` : null}

<h2>Invites</h2>
${
  invites.length
    ? tableBox(
        "Invites",
        html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Into</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
<tbody>${invites.map(
          (i) => html`<tr>
  <td>${i.email ?? "anyone with the link"}</td>
  <td>${nameOf(i.accountId)}</td>
  <td>${i.role}${i.operator ? ", operator" : null}</td>
  <td>${i.state}</td>
  <td>${formatTime(i.expiresAt)}</td>
  <td>${
    i.state === "pending"
      ? html`<form method="post" action="/console/admin/invites/${i.id}/revoke">
    ${csrfField(session)}
    <button type="submit" class="danger" aria-label="Revoke the invite for ${i.email ?? i.id}">Revoke</button>
  </form>`
      : null
  }</td>
</tr>`,
        )}</tbody></table>`,
      )
    : html`<p>No invites.</p>`
}`;
}
