/**
 * The wallet's statement as HTML (wallet-pages.ts): one row per job and per credit
 * (src/ledger/statement.ts), each job's ledger entries in a `<details>` under it (no script), amounts
 * by the one display rule (money-view.ts), rows stacked as labelled cards below 40rem.
 */

import type { WalletEntry } from "../ledger/figures.ts";
import type { StatementRow, StatementStatus } from "../ledger/statement.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { money, tableBox, when } from "./money-view.ts";

const STATUS_TEXT: Record<StatementStatus, string> = {
  held: "Held",
  charged: "Charged",
  released: "Released",
  topup: "Top-up",
  adjustment: "Adjustment",
};

/** A row's status as read: an operator's credit is a "Credit", a payment or code a "Top-up". */
function statusText(r: StatementRow): string {
  return r.status === "topup" && r.source === "ADMIN" ? "Credit" : STATUS_TEXT[r.status];
}

function signed(micro: bigint, currency: string): SafeHtml {
  return html`${micro > 0n ? "+" : ""}${money(micro, currency)}`;
}

/**
 * What the row did to the balance. A running job spent nothing yet: its hold is shown as held, not
 * as a charge; an ended job shows its charge (or "Nothing charged") with what it held and released.
 */
function amountCell(r: StatementRow, cur: string): SafeHtml {
  if (r.held_micro === null) return signed(r.amount_micro, cur);
  if (r.status === "held") {
    return html`${money(r.held_micro, cur)} held<span class="hint">running, not spent yet</span>`;
  }
  const main = r.charged_micro ? signed(r.amount_micro, cur) : html`Nothing charged`;
  const released = r.released_micro ?? 0n;
  const rest = released > 0n ? html`released ${money(released, cur)}` : html`none released`;
  return html`${main}<span class="hint">held ${money(r.held_micro, cur)}, ${rest}</span>`;
}

/** A top-up's cause as people name it. */
function creditWhat(r: StatementRow): string {
  const cause = r.ref_id?.startsWith("ord_")
    ? "Payment"
    : r.ref_id?.startsWith("rcode_")
      ? "Redeem code"
      : r.status === "adjustment"
        ? "Adjustment"
        : "Credit";
  return r.reason ? `${cause}: ${r.reason}` : cause;
}

const KIND_TEXT: Record<string, string> = {
  hold: "Hold",
  charge: "Charge",
  release: "Release",
  topup: "Top-up",
  adjustment: "Adjustment",
};

/**
 * One ledger entry under its row: its id, kind, time, the deltas it made (a hold moves only the held
 * amount, a charge both, a release only the held amount) and the balance after it.
 */
function entryItem(e: WalletEntry, cur: string): SafeHtml {
  const moves = [
    e.balance_delta_micro === 0n ? null : html`balance ${signed(e.balance_delta_micro, cur)}`,
    e.held_delta_micro === 0n ? null : html`held ${signed(e.held_delta_micro, cur)}`,
  ].filter((x) => x !== null);
  const what = moves.length === 2 ? html`${moves[0]}, ${moves[1]}` : (moves[0] ?? html`no change`);
  return html`<li data-entry="${e.id}"><span class="mono">#${e.id}</span> ${KIND_TEXT[e.kind] ?? e.kind}
  ${when(e.created_at)}: ${what}; balance after
  <span data-entry-balance-after>${money(e.balance_after_micro, cur)}</span></li>`;
}

function whatCell(r: StatementRow, cur: string): SafeHtml {
  const head =
    r.held_micro === null
      ? html`<span class="reason">${creditWhat(r)}</span>`
      : html`<span class="mono">${r.model_id ?? "a job"}</span>${
          r.request_id
            ? html` <a class="mono request-id" href="/console/requests/${r.request_id}">${r.request_id}</a>`
            : null
        }`;
  const of = r.request_id ?? r.model_id ?? `entry ${r.id}`;
  return html`${head}
  <details class="entries"><summary>${r.entries.length === 1 ? "1 ledger entry" : `${r.entries.length} ledger entries`}<span class="visually-hidden"> of ${of}</span></summary>
  <ul>${r.entries.map((e) => entryItem(e, cur))}</ul></details>`;
}

/**
 * While running jobs hold money, the balance is not what can be spent: the row says what was
 * available after it (balance after minus everything held then, the ledger's held_after).
 */
function available(r: StatementRow, cur: string): SafeHtml | null {
  if (r.held_after_micro === 0n) return null;
  return html`<span class="hint">${money(r.balance_after_micro - r.held_after_micro, cur)} available</span>`;
}

function statementRow(r: StatementRow, cur: string): SafeHtml {
  const why = r.status === "released" && r.reason ? html`<span class="hint">${r.reason}</span>` : null;
  return html`<tr data-row="${r.id}" data-status="${r.status}">
  <td data-label="When" class="when">${when(r.at)}</td>
  <td data-label="What" class="what">${whatCell(r, cur)}</td>
  <td data-label="Source">${r.source}</td>
  <td data-label="Status" class="state"><span class="status status-${r.status}">${statusText(r)}</span>${why}</td>
  <td data-label="Amount" class="num amount" data-amount="${r.amount_micro}">${amountCell(r, cur)}</td>
  <td data-label="Balance after" class="num" data-balance-after>${money(r.balance_after_micro, cur)}${available(r, cur)}</td>
</tr>`;
}

/** The statement's table: newest first, "Balance after" the ledger's running balance. */
export function statementTable(rows: StatementRow[], currency: string): SafeHtml {
  return tableBox(
    "Wallet statement",
    html`<table id="statement" class="stack-rows wallet-table statement-table">
<caption class="visually-hidden">Wallet statement</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Source</th><th scope="col">Status</th>
<th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th></tr></thead>
<tbody>${rows.map((r) => statementRow(r, currency))}</tbody>
</table>`,
  );
}
