/**
 * The operator's accounts pages' HTML (admin-accounts-pages.ts): the list with its search, and one
 * account with its credit and adjust forms, members and latest wallet entries.
 */
import type { Account, ApiKeyRow } from "../accounts/store.ts";
import type { EntryView } from "../ledger/wallet.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { ConsoleSession } from "../people/types.ts";
import { notice } from "./admin-view.ts";
import { formatMoney, formatTime } from "./format.ts";
import { formError } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { tableBox } from "./money-view.ts";
import { isoText } from "./requests-view.ts";

function accountRows(rows: Account[]): SafeHtml {
  if (rows.length === 0) return html`<p>No accounts match.</p>`;
  return tableBox(
    "Accounts",
    html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col" class="num">Balance</th><th scope="col" class="num">Held</th><th scope="col" class="num">Available</th></tr></thead>
<tbody>${rows.map(
      (a) => html`<tr>
  <td><a href="/console/admin/accounts/${a.id}">${a.name}</a>${a.disabled_at !== null ? html` <span class="hint">(disabled)</span>` : null}</td>
  <td class="mono">${a.id}</td>
  <td class="num">${formatMoney(a.balance_micro, a.currency)}</td>
  <td class="num">${formatMoney(a.held_micro, a.currency)}</td>
  <td class="num">${formatMoney(a.balance_micro - a.held_micro, a.currency)}</td>
</tr>`,
    )}</tbody></table>`,
  );
}

/** The accounts list: the search form, a page of accounts, the next page's link. */
export function accountsBody(q: string, rows: Account[], next: string | null, create: SafeHtml): SafeHtml {
  return html`<h1>Accounts</h1>
${create}
<form class="filters" method="get" action="/console/admin" role="search">
  <label>Search <input type="search" name="q" value="${q}" maxlength="200" placeholder="Name or account id"></label>
  <button type="submit">Search</button>
  ${q ? html`<a href="/console/admin">All accounts</a>` : null}
</form>
${accountRows(rows)}
${next ? html`<p><a class="button secondary" href="/console/admin?after=${next}">Next</a></p>` : null}`;
}

export interface MoneyFormState {
  credit?: { amount: string; reason: string; error: string | null };
  adjust?: { amount: string; reason: string; error: string | null };
  done?: string | null;
}

/** One account: its figures, the credit and adjust forms (refilled after an error), members, latest entries. */
export function accountDetailBody(
  session: ConsoleSession,
  a: Account,
  keys: ApiKeyRow[],
  members: { email: string; role: string }[],
  entries: EntryView[],
  state: MoneyFormState,
  /** Shown under the heading (a disabled account's state and its Enable button). */
  banner: SafeHtml | null = null,
): SafeHtml {
  const cur = a.currency;
  const credit = state.credit ?? { amount: "", reason: "", error: null };
  const adjust = state.adjust ?? { amount: "", reason: "", error: null };
  return html`<p><a href="/console/admin">← All accounts</a></p>
<h1 class="wrap-anywhere">${a.name}</h1>
<p class="mono">${a.id}</p>
${notice(state.done ?? null)}
${banner}
<div class="cards">
  <div class="card"><h2>Balance</h2><p class="figure">${formatMoney(a.balance_micro, cur)}</p></div>
  <div class="card"><h2>Held</h2><p class="figure">${formatMoney(a.held_micro, cur)}</p></div>
  <div class="card"><h2>Available</h2><p class="figure">${formatMoney(a.balance_micro - a.held_micro, cur)}</p></div>
</div>
<p>Currency ${cur}; ${keys.filter((k) => k.revoked_at === null).length} active keys; created ${formatTime(a.created_at)}.</p>

<h2 id="credit-heading">Credit</h2>
<form class="stack" method="post" action="/console/admin/accounts/${a.id}/credit" aria-labelledby="credit-heading">
  ${csrfField(session)}
  ${formError(credit.error)}
  <label>Amount (${cur}) <span class="hint">A decimal above 0 with at most 6 places, e.g. 12.50.</span>
    <input name="amount" inputmode="decimal" required maxlength="40" value="${credit.amount}" autocomplete="off"></label>
  <label>Reason <input name="reason" required maxlength="500" value="${credit.reason}" autocomplete="off"></label>
  <button type="submit">Credit</button>
</form>

<h2 id="adjust-heading">Adjust</h2>
<form class="stack" method="post" action="/console/admin/accounts/${a.id}/adjust" aria-labelledby="adjust-heading">
  ${csrfField(session)}
  ${formError(adjust.error)}
  <label>Amount (${cur}) <span class="hint">Signed: -5 takes 5 ${cur} away. The balance may not go below what is held by open jobs.</span>
    <input name="amount" inputmode="decimal" required maxlength="40" value="${adjust.amount}" autocomplete="off"></label>
  <label>Reason <input name="reason" required maxlength="500" value="${adjust.reason}" autocomplete="off"></label>
  <button type="submit">Adjust</button>
</form>

<h2>Members</h2>
${
  members.length
    ? html`<ul class="wrap-anywhere">${members.map((m) => html`<li>${m.email} (${m.role})</li>`)}</ul>`
    : html`<p>No console members. Invite one on <a href="/console/admin/people">People and invites</a>.</p>`
}

<h2>Latest wallet entries</h2>
${
  entries.length
    ? tableBox(
        "Latest wallet entries",
        html`<table>
<thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Source</th><th scope="col" class="num">Amount</th><th scope="col">Reason</th></tr></thead>
<tbody>${entries.map(
          (e) => html`<tr><td>${isoText(e.created_at)}</td><td>${e.kind}</td><td>${e.label}</td>
<td class="num">${formatMoney(BigInt(e.balance_delta_micro), cur)}</td><td>${e.reason ?? ""}</td></tr>`,
        )}</tbody></table>`,
      )
    : html`<p>No entries yet.</p>`
}`;
}
