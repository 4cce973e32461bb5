/**
 * The operator's redeem-codes pages' HTML (admin-codes-pages.ts): the codes just made (shown once,
 * with a copy button and a download built in the page as a data: link), the create form, the
 * batches with their counts, the revoke confirmation.
 */
import { type BatchView, MAX_BATCH_SIZE, NOTE_MAX_LENGTH } from "../codes/service.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { ConsoleSession } from "../people/types.ts";
import { notice } from "./admin-view.ts";
import { formatMoney } from "./format.ts";
import { csrfField } from "./layout.ts";
import { tableBox } from "./money-view.ts";

export const PATH = "/console/admin/codes";

export interface CodesState {
  /** A batch just made: its codes, shown once. */
  made?: { batch: BatchView; codes: string[] } | null;
  form?: { amount: string; currency: string; count: string; expires: string; note: string };
  error?: string | null;
  done?: string | null;
}

function dateText(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "never";
}

function madeBox(made: NonNullable<CodesState["made"]>): SafeHtml {
  const b = made.batch;
  const text = `${made.codes.join("\n")}\n`;
  const href = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return html`<div class="notice warn" role="status">
  <p>${made.codes.length} code(s) of ${formatMoney(BigInt(b.amount_micro), b.currency)} in batch <span class="mono">${b.id}</span>${b.expires_at ? `, valid until ${dateText(b.expires_at)}` : null}.
  Copy or download them now: they are shown only once (only their hashes are stored).</p>
  <label for="new-codes">New codes</label>
  <textarea id="new-codes" readonly rows="${Math.min(made.codes.length, 10)}" class="mono" spellcheck="false" autocomplete="off">${text}</textarea>
  <p class="button-row">
    <button type="button" class="secondary" data-copy="new-codes" hidden>Copy</button>
    <a class="button secondary" href="${href}" download="gengate-codes-${b.id}.txt">Download as text</a>
  </p>
</div>`;
}

function batchRow(b: BatchView, session: ConsoleSession): SafeHtml {
  const revocable = b.unused + b.expired > 0;
  return html`<tr data-batch="${b.id}">
  <th scope="row" class="mono">${b.id}</th>
  <td class="num">${formatMoney(BigInt(b.amount_micro), b.currency)}</td>
  <td class="num">${b.count}</td>
  <td class="num">${b.redeemed}</td>
  <td class="num">${b.unused}</td>
  <td class="num">${b.expired}</td>
  <td class="num">${b.revoked}</td>
  <td>${dateText(b.expires_at)}</td>
  <td>${dateText(b.created_at)}</td>
  <td class="wrap-anywhere">${b.note ?? ""}</td>
  <td>${
    revocable
      ? html`<form method="get" action="${PATH}/${b.id}/revoke" class="inline">
    <button type="submit" class="danger" data-dialog="revoke-${b.id}" aria-label="Revoke unused codes of ${b.id}">Revoke unused</button>
  </form>
  <dialog id="revoke-${b.id}" aria-labelledby="revoke-${b.id}-title">${revokeForm(b, session)}</dialog>`
      : null
  }</td>
</tr>`;
}

export function revokeForm(b: BatchView, session: ConsoleSession): SafeHtml {
  return html`<h2 id="revoke-${b.id}-title">Revoke the unused codes of ${b.id}?</h2>
<p>${b.unused + b.expired} code(s) not yet redeemed stop working at once. Redeemed codes and their credits stay. This cannot be undone.</p>
<form method="post" action="${PATH}/${b.id}/revoke">
  ${csrfField(session)}
  <button type="submit" class="danger">Revoke codes</button>
  <button type="button" class="secondary" data-dialog-close>Cancel</button>
</form>`;
}

/** The codes page: a batch just made (shown once), the create form, the batches. */
export function codesBody(session: ConsoleSession, batches: BatchView[], state: CodesState): SafeHtml {
  const f = state.form ?? { amount: "", currency: "USD", count: "1", expires: "", note: "" };
  return html`<h1>Redeem codes</h1>
${notice(state.done ?? null)}
${state.made ? madeBox(state.made) : null}
<h2 id="create-heading">Create a batch</h2>
<form class="stack" method="post" action="${PATH}" aria-labelledby="create-heading">
  ${csrfField(session)}
  ${state.error ? html`<p class="notice error" role="alert">${state.error}</p>` : null}
  <label>Amount <span class="hint">What each code credits: a decimal above 0 with at most 6 places, e.g. 12.50.</span>
    <input name="amount" inputmode="decimal" required maxlength="40" value="${f.amount}" autocomplete="off"></label>
  <label>Currency <select name="currency">${["USD", "RUB"].map((cur) => html`<option value="${cur}"${f.currency === cur ? html` selected` : null}>${cur}</option>`)}</select></label>
  <label>Count <span class="hint">1 to ${MAX_BATCH_SIZE} codes.</span>
    <input name="count" type="number" min="1" max="${MAX_BATCH_SIZE}" required value="${f.count}"></label>
  <label>Expires <span class="hint">Optional: the codes work through this day (UTC).</span>
    <input name="expires" type="date" value="${f.expires}"></label>
  <label>Note <span class="hint">Optional, for you: who the batch is for.</span>
    <input name="note" maxlength="${NOTE_MAX_LENGTH}" value="${f.note}" autocomplete="off"></label>
  <button type="submit">Create codes</button>
</form>
<h2>Batches</h2>
${
  batches.length
    ? tableBox(
        "Batches",
        html`<table id="batches">
<thead><tr><th scope="col">Batch</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Codes</th><th scope="col" class="num">Redeemed</th><th scope="col" class="num">Unused</th><th scope="col" class="num">Expired</th><th scope="col" class="num">Revoked</th><th scope="col">Expires</th><th scope="col">Created</th><th scope="col">Note</th><th scope="col">Actions</th></tr></thead>
<tbody>${batches.map((b) => batchRow(b, session))}</tbody></table>`,
      )
    : html`<p>No batches yet.</p>`
}`;
}
