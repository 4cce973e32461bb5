/**
 * The operator's redeem codes (`/console/admin/codes`): make a batch (the codes are shown once, in
 * the answer to the POST: a read-only box with a copy button and a download as text, built in the
 * page as a data: link, so the codes never sit on the server), the batches with their counts
 * (redeemed, unused, expired, revoked), and revoking a batch's unused codes after a confirmation
 * (a <dialog>; without JavaScript a confirmation page). The same CodeService as the CLI and the
 * admin API. Every route starts with requireOperator (403 for anyone else).
 */
import { Elysia } from "elysia";
import { type BatchView, MAX_BATCH_SIZE, NOTE_MAX_LENGTH } from "../codes/service.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { adminPage, notice, shown } from "./admin-view.ts";
import { formatMoney } from "./format.ts";
import { type ConsoleKit, field, type PageContext, redirect, requireOperator } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { tableBox } from "./money-view.ts";

const BATCH_ID = /^rbatch_[0-9A-Za-z]{8,64}$/;
const PATH = "/console/admin/codes";

interface CodesState {
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

function batchRow(b: BatchView, c: PageContext): SafeHtml {
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
  <dialog id="revoke-${b.id}" aria-labelledby="revoke-${b.id}-title">${revokeForm(b, c)}</dialog>`
      : null
  }</td>
</tr>`;
}

function revokeForm(b: BatchView, c: PageContext): SafeHtml {
  return html`<h2 id="revoke-${b.id}-title">Revoke the unused codes of ${b.id}?</h2>
<p>${b.unused + b.expired} code(s) not yet redeemed stop working at once. Redeemed codes and their credits stay. This cannot be undone.</p>
<form method="post" action="${PATH}/${b.id}/revoke">
  ${csrfField(c.session)}
  <button type="submit" class="danger">Revoke codes</button>
  <button type="button" class="secondary" data-dialog-close>Cancel</button>
</form>`;
}

async function codesPage(
  c: PageContext,
  kit: ConsoleKit,
  state: CodesState = {},
  status = 200,
): Promise<Response> {
  requireOperator(c.session);
  const batches = await kit.ctx.codes.listBatches(100);
  const f = state.form ?? { amount: "", currency: "USD", count: "1", expires: "", note: "" };
  const body = html`<h1>Redeem codes</h1>
${notice(state.done ?? null)}
${state.made ? madeBox(state.made) : null}
<h2 id="create-heading">Create a batch</h2>
<form class="stack" method="post" action="${PATH}" aria-labelledby="create-heading">
  ${csrfField(c.session)}
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
<tbody>${batches.map((b) => batchRow(b, c))}</tbody></table>`,
      )
    : html`<p>No batches yet.</p>`
}`;
  return adminPage(c, "Redeem codes", PATH, body, status);
}

function batchParam(c: PageContext): string {
  const id = c.params.id ?? "";
  if (!BATCH_ID.test(id)) throw new DomainError("not_found", `No code batch ${id}.`);
  return id;
}

export function adminCodesPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      PATH,
      kit.page(async (c) => {
        const revoked = c.url.searchParams.get("revoked") ?? "";
        return await codesPage(c, kit, {
          done: /^[0-9]{1,4}$/.test(revoked) ? `${revoked} unused code(s) revoked.` : null,
        });
      }),
    )
    .post(
      PATH,
      kit.action(async (c) => {
        requireOperator(c.session);
        const form = {
          amount: field(c.form, "amount").trim().slice(0, 40),
          currency: field(c.form, "currency").slice(0, 8),
          count: field(c.form, "count").trim().slice(0, 12),
          expires: field(c.form, "expires").trim().slice(0, 40),
          note: field(c.form, "note").slice(0, NOTE_MAX_LENGTH + 1),
        };
        try {
          const made = await kit.ctx.codes.createBatchFrom({ ...form, createdBy: c.session.personId });
          // The answer to the POST, never a redirect: a reload does not show the codes again.
          return await codesPage(c, kit, { made });
        } catch (err) {
          const s = shown(err);
          if (!s) throw err;
          return codesPage(c, kit, { form, error: s.message }, s.status);
        }
      }),
    )
    .get(
      `${PATH}/:id/revoke`,
      kit.page(async (c) => {
        requireOperator(c.session);
        const b = await kit.ctx.codes.getBatch(batchParam(c));
        return adminPage(
          c,
          "Revoke codes",
          PATH,
          html`<p><a href="${PATH}">← Redeem codes</a></p>${revokeForm(b, c)}`,
        );
      }),
    )
    .post(
      `${PATH}/:id/revoke`,
      kit.action(async (c) => {
        requireOperator(c.session);
        const { revoked } = await kit.ctx.codes.revokeBatch(batchParam(c));
        return redirect(`${PATH}?revoked=${revoked}`);
      }),
    );
}
