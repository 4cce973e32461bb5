/**
 * The operator's account pages, the parts issue 34 added (admin-account-actions-pages.ts): the
 * `Create account` form of the accounts list, what a new account shows once (its Default key and
 * the owner's invite link), an account's keys with `Revoke` (a confirmation: a dialog, or a page
 * without JavaScript), and `Disable account` / `Enable account` with the required reason.
 */
import type { Account, ApiKeyRow } from "../accounts/store.ts";
import type { KeyFigures } from "../ledger/figures.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { rfc3339 } from "../lib/time.ts";
import type { ConsoleSession } from "../people/types.ts";
import { formatTime } from "./format.ts";
import { stateOf as keyStateOf, revokeControl } from "./keys-view.ts";
import { formError } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { money, tableBox, when } from "./money-view.ts";

/** What the `Create account` form holds after a refusal (kept as typed). */
export interface CreateAccountForm {
  name: string;
  currency: string;
  email: string;
  error: string | null;
}

/** A new account's secrets, shown once on its page after the redirect (the session's flash). */
export interface CreatedAccount {
  key: string;
  invite: { email: string; url: string; expiresAt: number; mailed: boolean } | null;
}

export function createAccountForm(
  session: ConsoleSession,
  f: CreateAccountForm,
  defaultCurrency: string,
): SafeHtml {
  const currency = f.currency || defaultCurrency;
  return html`<details class="create-account"${f.error ? html` open` : null}>
<summary>Create account</summary>
<form class="stack" method="post" action="/console/admin/accounts" aria-label="Create account">
  ${csrfField(session)}
  ${formError(f.error)}
  <label>Name <input name="name" required maxlength="100" value="${f.name}" autocomplete="off"></label>
  <label for="new-currency">Currency</label>
  <select id="new-currency" name="currency">
    ${["USD", "RUB"].map((c) => html`<option value="${c}"${c === currency ? html` selected` : null}>${c}</option>`)}
  </select>
  <label for="owner-email">Owner's email</label>
  <span class="hint" id="owner-email-hint">Optional: an invite link (7 days) that makes this person the account's owner.</span>
  <input id="owner-email" name="email" type="email" maxlength="254" value="${f.email}" autocomplete="off" aria-describedby="owner-email-hint">
  <button type="submit">Create account</button>
</form>
</details>`;
}

/** The new account's Default key and invite link, shown once. */
export function createdSection(created: CreatedAccount): SafeHtml {
  const invite = created.invite;
  return html`<section class="notice warn" aria-labelledby="created-title">
  <h2 id="created-title">Account created</h2>
  <p>Copy what you need now: it is shown only this once (gengate keeps only hashes).</p>
  <label for="new-key">New key</label>
  <div class="copy-row">
    <input id="new-key" type="text" readonly value="${created.key}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-key" hidden>Copy</button>
  </div>
  ${
    invite
      ? html`<label for="invite-link">Invite link for ${invite.email}</label>
  <div class="copy-row">
    <input id="invite-link" type="text" readonly value="${invite.url}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="invite-link" hidden>Copy</button>
  </div>
  <p class="hint">It works until ${formatTime(invite.expiresAt)}.${invite.mailed ? " It is also being emailed to that address." : ""}</p>`
      : null
  }
</section>`;
}

function limitsText(row: ApiKeyRow, k: KeyFigures, currency: string): SafeHtml {
  const parts: SafeHtml[] = [];
  if (k.monthly_limit_micro !== null) parts.push(html`${money(k.monthly_limit_micro, currency)} a month`);
  if (row.writes_per_minute !== null) parts.push(html`${row.writes_per_minute} writes a minute`);
  if (row.max_in_flight !== null) parts.push(html`${row.max_in_flight} in flight`);
  if (row.allowed_models !== null)
    parts.push(html`models ${(JSON.parse(row.allowed_models) as string[]).join(", ")}`);
  if (row.allowed_cidrs !== null)
    parts.push(html`from ${(JSON.parse(row.allowed_cidrs) as string[]).join(", ")}`);
  if (parts.length === 0) return html`<span class="hint">none</span>`;
  return html`${parts.map((p, i) => html`${i ? html`<br>` : null}${p}`)}`;
}

/** The account's keys: name, prefix, state, limits, spend, last used, and `Revoke` on live ones. */
export function keysSection(
  session: ConsoleSession,
  account: Account,
  figures: KeyFigures[],
  rows: ApiKeyRow[],
): SafeHtml {
  const byId = new Map(rows.map((r) => [r.id, r]));
  if (figures.length === 0) return html`<h2>Keys</h2><p>No keys.</p>`;
  return html`<h2 id="keys-heading">Keys</h2>
${tableBox(
  "Keys",
  html`<table class="stack-rows">
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">State</th><th scope="col">Limits</th>
<th scope="col" class="num">Spent this month</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${figures.map((k) => {
    const row = byId.get(k.key_id)!;
    const state = keyStateOf(row);
    return html`<tr data-key="${k.key_id}">
  <th scope="row" data-label="Name">${k.name}${row.can_manage === 1n ? html` <span class="hint">(manage)</span>` : null}</th>
  <td data-label="Prefix" class="mono">${k.prefix}…</td>
  <td data-label="State">${state}${row.expires_at !== null && state === "active" ? html`<br><span class="hint">until ${when(rfc3339(row.expires_at))}</span>` : null}</td>
  <td data-label="Limits">${limitsText(row, k, account.currency)}</td>
  <td data-label="Spent this month" class="num">${money(k.spent_micro, account.currency)}</td>
  <td data-label="Last used">${when(k.last_used_at)}</td>
  <td data-label="Actions">${row.revoked_at === null ? revokeControl(session, k, `/console/admin/accounts/${account.id}/keys/${k.key_id}/revoke`, `Revoke ${k.name}`) : null}</td>
</tr>`;
  })}</tbody></table>`,
)}`;
}

/** The revoke confirmation page (without JavaScript the `Revoke` button lands here). */
export function revokePageBody(session: ConsoleSession, account: Account, row: ApiKeyRow): SafeHtml {
  return html`<p><a href="/console/admin/accounts/${account.id}">← ${account.name}</a></p>
<h1>Revoke ${row.name}?</h1>
<p>Requests with this key (<span class="mono">${row.prefix}…</span>) of ${account.name} are refused from the next one on. This cannot be undone.</p>
<form method="post" action="/console/admin/accounts/${account.id}/keys/${row.id}/revoke">
  ${csrfField(session)}
  <button type="submit" class="danger">Revoke key</button>
  <a href="/console/admin/accounts/${account.id}">Cancel</a>
</form>`;
}

/** `Disable account` with its required reason, or the reason and `Enable account`. */
export function disableSection(
  session: ConsoleSession,
  account: Account,
  form: { reason: string; error: string | null },
): SafeHtml {
  if (account.disabled_at !== null) {
    return html`<section class="notice error" aria-labelledby="disabled-heading">
<h2 id="disabled-heading">Disabled</h2>
<p>Since ${formatTime(account.disabled_at)}: ${account.disabled_reason ?? ""}</p>
<p>Its keys are refused (401) and its people cannot use it. Jobs opened before run to their end.</p>
<form method="post" action="/console/admin/accounts/${account.id}/enable">
  ${csrfField(session)}
  <button type="submit">Enable account</button>
</form>
</section>`;
  }
  return html`<h2 id="disable-heading">Disable</h2>
<form class="stack" method="post" action="/console/admin/accounts/${account.id}/disable" aria-labelledby="disable-heading">
  ${csrfField(session)}
  ${formError(form.error)}
  <p class="hint">From the next request on its keys are refused (401) and every session looking at it ends; its people cannot use it until it is enabled again. Jobs already opened run to their end (their money is held).</p>
  <label>Reason <input name="reason" required maxlength="500" value="${form.reason}" autocomplete="off"></label>
  <button type="submit" class="danger">Disable account</button>
</form>`;
}
