/**
 * The account settings page (/console/settings): members (owners invite, remove, change roles),
 * the webhook signing secret (owners reveal and rotate), the low-balance alert: threshold and alert
 * URL (owners set them; src/alerts/). Rendering only: the routes are settings-members-pages.ts and
 * settings-account-pages.ts.
 */
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import type { MemberView } from "../people/members.ts";
import type { Role } from "../people/types.ts";
import { formatMoney, formatTime } from "./format.ts";
import {
  type AccountSession,
  type ActionContext,
  field,
  formError,
  htmlResponse,
  type KitFor,
  type PageContext,
  requireAccount,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { ACCOUNT_PATH, doneNotice, settingsNav, shownOnce } from "./settings-shared.ts";

export interface AccountState {
  notice?: SafeHtml | null;
  error?: string | null;
  invite?: { url: string; email: string; role: Role; expiresAt: number; mailed: boolean } | null;
  /** The alert URL as typed, shown again with its error. */
  alertUrl?: { value: string; error: string } | null;
  /** A refused form's fields as typed (the invite's email and role, the threshold), shown again. */
  typed?: { email?: string; role?: string; threshold?: string } | null;
  secret?: { value: string; rotated: boolean } | null;
}

export function membersSection(
  s: AccountSession,
  members: MemberView[],
  state: AccountState,
  mail: boolean,
): SafeHtml {
  const owner = s.role === "owner";
  const rows = members.map((m) => {
    const you = m.personId === s.personId;
    const controls = owner
      ? html`<td class="actions">
  <form class="inline" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/role">
    ${csrfField(s)}
    <select name="role" aria-label="Role of ${m.email}">
      <option value="member"${m.role === "member" ? html` selected` : null}>member</option>
      <option value="owner"${m.role === "owner" ? html` selected` : null}>owner</option>
    </select>
    <button type="submit" class="secondary">Change role</button>
  </form>
  <form class="inline" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/remove">
    ${csrfField(s)}
    <button type="submit" class="secondary" data-dialog="remove-${m.personId}">Remove</button>
  </form>
  <dialog id="remove-${m.personId}" aria-labelledby="remove-${m.personId}-h">
    ${removeForm(s, m, you)}
  </dialog>
</td>`
      : null;
    return html`<tr>
  <td>${m.email}${you ? html` <span class="hint">(you)</span>` : null}</td>
  <td>${m.role}</td>
  <td>${m.twoFactor ? "on" : "off"}</td>
  <td>${formatTime(m.createdAt)}</td>
  ${controls}
</tr>`;
  });
  const invite = state.invite
    ? html`<div class="notice warn" role="status">
  <p>Invite link for <strong>${state.invite.email}</strong> as ${state.invite.role === "owner" ? "an owner" : "a member"}.
  ${state.invite.mailed ? html`It is also being emailed to that address. You can copy it here too: it is` : html`This server sends no email: copy the link now and hand it over yourself. It is`}
  shown only once, works once, and expires ${formatTime(state.invite.expiresAt)}.</p>
  ${shownOnce("invite-link", "Invite link", state.invite.url)}
</div>`
    : null;
  const inviteForm = owner
    ? html`<h3>Invite someone</h3>
<form class="stack" method="post" action="${ACCOUNT_PATH}/members/invite">
  ${csrfField(s)}
  <label>Email <input type="email" name="email" autocomplete="off" required maxlength="254" value="${state.typed?.email ?? ""}"></label>
  <label>Role
    <select name="role">
      <option value="member"${state.typed?.role === "owner" ? null : html` selected`}>member</option>
      <option value="owner"${state.typed?.role === "owner" ? html` selected` : null}>owner</option>
    </select></label>
  <p class="hint">A member sees usage, requests and the wallet, uses the studio and manages the keys they
  create; an owner can do everything, including members and settings.</p>
  <button type="submit">Create invite link</button>
</form>
${
  mail
    ? html`<p class="hint">The person gets a one-time link (valid 7 days) by email; it is shown to you once too.</p>`
    : html`<p class="hint">You get a one-time link (valid 7 days) to give to the person: this server does not send email.</p>`
}`
    : html`<p class="hint">Only owners invite, remove members or change roles.</p>`;
  return html`<section aria-labelledby="members-h">
<h2 id="members-h">Members</h2>
${invite}
<div class="table-wrap">
<table>
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Joined</th>${owner ? html`<th scope="col">Actions</th>` : null}</tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>
${inviteForm}
</section>`;
}

export function removeForm(s: AccountSession, m: MemberView, you: boolean): SafeHtml {
  return html`<form class="stack" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/remove">
  ${csrfField(s)}
  <input type="hidden" name="confirm" value="yes">
  <h2 id="remove-${m.personId}-h">Remove ${m.email}?</h2>
  <p>${you ? "You will lose access to this account." : "They lose access to this account at once."} Keys
  they created stay until an owner revokes them.</p>
  <div class="button-row">
    <button type="submit" class="danger">Remove member</button>
    <button type="button" class="secondary" data-dialog-close>Cancel</button>
  </div>
</form>`;
}

export function rotateForm(s: AccountSession): SafeHtml {
  return html`<form class="stack" method="post" action="${ACCOUNT_PATH}/webhook-secret/rotate">
  ${csrfField(s)}
  <input type="hidden" name="confirm" value="yes">
  <h2 id="rotate-h">Rotate the webhook secret?</h2>
  <p>A new secret is made. For 24 hours webhooks carry two signatures (new and old secret), so your
  receivers can switch over without refusing any; after that the old secret stops working.</p>
  <div class="button-row">
    <button type="submit" class="danger">Rotate now</button>
    <button type="button" class="secondary" data-dialog-close>Cancel</button>
  </div>
</form>`;
}

export function secretSection(s: AccountSession, state: AccountState): SafeHtml {
  const about = html`<p>Every webhook of this account is signed with this secret (Standard Webhooks:
<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>). The API gives it
too: <code>GET /v1/account/webhook-secret</code>.</p>`;
  if (s.role !== "owner") {
    return html`<section aria-labelledby="secret-h">
<h2 id="secret-h">Webhook signing secret</h2>
${about}
<p class="hint">Only owners reveal or rotate it here.</p>
</section>`;
  }
  const shown = state.secret
    ? html`${state.secret.rotated ? html`<p class="notice ok" role="status">The secret is rotated. The old one keeps signing for 24 hours.</p>` : null}
${shownOnce("webhook-secret", "Webhook secret", state.secret.value)}`
    : null;
  const reveal = state.secret
    ? null
    : html`<form method="post" action="${ACCOUNT_PATH}/webhook-secret/reveal">
  ${csrfField(s)}
  <button type="submit" class="secondary">Reveal secret</button>
</form>`;
  return html`<section aria-labelledby="secret-h">
<h2 id="secret-h">Webhook signing secret</h2>
${about}
${shown}
<div class="button-row">
${reveal}
<form method="post" action="${ACCOUNT_PATH}/webhook-secret/rotate">
  ${csrfField(s)}
  <button type="submit" class="secondary" data-dialog="rotate-dialog">Rotate secret</button>
</form>
</div>
<dialog id="rotate-dialog" aria-labelledby="rotate-h">${rotateForm(s)}</dialog>
</section>`;
}

export function thresholdSection(
  s: AccountSession,
  account: { alert_threshold_micro: bigint | null; alert_url: string | null; currency: string },
  state: AccountState,
  mail: boolean,
): SafeHtml {
  const threshold = account.alert_threshold_micro;
  const currency = account.currency;
  const current =
    threshold === null
      ? html`<p>No alert threshold is set.</p>`
      : html`<p>When the available balance (balance minus what running jobs hold) falls below
<strong>${formatMoney(threshold, currency)}</strong>, the overview shows a notice${account.alert_url ? html`, a signed webhook goes to the alert URL` : null}${mail ? html` and the owners get an email` : null}: once, until a top-up brings it back to the threshold or above.</p>`;
  const form =
    s.role === "owner"
      ? html`<form class="stack" method="post" action="${ACCOUNT_PATH}/alert-threshold">
  ${csrfField(s)}
  <label>Alert threshold (${currency})
    <span class="hint" id="threshold-hint" aria-hidden="true">A decimal amount such as 10 or 25.50; leave empty for no alert.</span>
    <input name="threshold" aria-describedby="threshold-hint" inputmode="decimal" autocomplete="off" maxlength="32"
      value="${state.typed?.threshold ?? (threshold === null ? "" : formatMicro(threshold))}"></label>
  <button type="submit">Save threshold</button>
</form>`
      : html`<p class="hint">Only owners change it.</p>`;
  const typed = state.alertUrl ?? null;
  const urlForm =
    s.role === "owner"
      ? html`<h3>Where the alert goes</h3>
<form class="stack" method="post" action="${ACCOUNT_PATH}/alert-url">
  ${csrfField(s)}
  ${formError(typed?.error)}
  <label>Alert URL
    <span class="hint" id="alert-url-hint" aria-hidden="true">An https:// address of yours that receives the alert as a webhook, signed with the webhook secret above; leave empty for none.</span>
    <input name="alert_url" type="url" aria-describedby="alert-url-hint" autocomplete="off" maxlength="2048"
      value="${typed ? typed.value : (account.alert_url ?? "")}"></label>
  <button type="submit">Save alert URL</button>
</form>`
      : html`<p>Alert URL: ${account.alert_url ? html`<span class="mono">${account.alert_url}</span>` : "none"}.</p>`;
  return html`<section aria-labelledby="alert-h">
<h2 id="alert-h">Low-balance alert</h2>
${current}
${form}
${urlForm}
</section>`;
}

export async function accountPage(
  kit: KitFor<"accounts" | "mailer">,
  c: PageContext,
  state: AccountState,
): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const account = await kit.ctx.accounts.getAccount(s.accountId);
  if (!account) throw new DomainError("not_found", "No such account.");
  const members = await kit.people.members.listMembers(s.accountId);
  return c.layout({
    title: "Settings",
    active: "settings",
    body: html`<h1>Settings</h1>
${settingsNav("account")}
${state.notice ?? doneNotice(c)}
${formError(state.error)}
<p class="hint">Account <strong>${account.name}</strong> (${account.currency}); you are ${s.role === "owner" ? "an owner" : "a member"}.</p>
${membersSection(s, members, state, kit.ctx.mailer.enabled())}
${secretSection(s, state)}
${thresholdSection(s, account, state, kit.ctx.mailer.enabled())}`,
  });
}

/** The account page again with a service's refusal (last owner, bad email...) and its status. */
export async function accountError(
  kit: KitFor<"accounts" | "mailer">,
  c: ActionContext,
  err: unknown,
): Promise<Response> {
  if (!(err instanceof DomainError) || !["validation_error", "conflict"].includes(err.code)) throw err;
  // What was typed comes back with the message (bounded like the fields themselves).
  const kept = (name: string, max: number) => field(c.form, name).slice(0, max) || undefined;
  const typed = { email: kept("email", 254), role: kept("role", 16), threshold: kept("threshold", 32) };
  return htmlResponse(await accountPage(kit, c, { error: err.message, typed }), httpStatus(err.code));
}
