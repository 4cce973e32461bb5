/**
 * Wallet (`/console/wallet`): the statement, one row per job (held while it runs, then charged or
 * released) and per credit, newest first, each job's ledger entries one click away under it
 * (walletStatement, src/ledger/statement.ts); `/console/wallet/entries`: the ledger's entries
 * themselves, newest first, with the running balance stored with each, their kind and source (API,
 * STUDIO, ADMIN, TOPUP), model, request and reason (walletPage); `/console/wallet.csv` (walletCsv,
 * src/ledger/figures.ts). Both views take a source filter and cursor paging ("Older").
 */
import { Elysia } from "elysia";
import { parseWalletSource, type WalletEntry, walletCsv, walletPage } from "../ledger/figures.ts";
import { walletStatement } from "../ledger/statement.ts";
import { WALLET_SOURCES, type WalletSource } from "../ledger/wallet.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { type ConsoleKit, type PageContext, requireAccount } from "./kit.ts";
import { csvResponse, empty, money, tableBox, when } from "./money-view.ts";
import { statementTable } from "./wallet-view.ts";

export const WALLET_PAGE_SIZE = 50;

function signed(micro: bigint, currency: string): SafeHtml {
  return micro === 0n
    ? html`<span class="hint">—</span>`
    : html`${micro > 0n ? "+" : ""}${money(micro, currency)}`;
}

/** The receipt of a top-up (a paid order or a redeemed code), or null. */
export function receiptHref(e: Pick<WalletEntry, "source" | "ref_id">): string | null {
  return e.source === "TOPUP" && e.ref_id ? `/console/billing/receipts/${e.ref_id}` : null;
}

function entryRow(e: WalletEntry, currency: string, receipts: boolean): SafeHtml {
  const receipt = receipts ? receiptHref(e) : null;
  return html`<tr data-entry="${e.id}">
  <td data-label="When" class="when">${when(e.created_at)}</td>
  <td data-label="Kind">${e.kind}</td>
  <td data-label="Source">${e.source}</td>
  <td data-label="Balance change" class="num" data-balance-delta>${signed(e.balance_delta_micro, currency)}</td>
  <td data-label="Held change" class="num" data-held-delta>${signed(e.held_delta_micro, currency)}</td>
  <td data-label="Balance after" class="num" data-balance-after>${money(e.balance_after_micro, currency)}</td>
  <td data-label="Model" class="mono">${e.model_id ?? ""}</td>
  <td data-label="Request" class="request-id">${e.request_id ? html`<a class="mono" href="/console/requests/${e.request_id}">${e.request_id}</a>` : ""}</td>
  <td data-label="Reason" class="reason">${e.reason ?? ""}</td>${
    receipts
      ? html`
  <td data-label="Receipt">${receipt ? html`<a href="${receipt}">Receipt<span class="visually-hidden"> for ${e.ref_id}</span></a>` : ""}</td>`
      : null
  }
</tr>`;
}

/**
 * The wallet's entries table (also used by the billing page for its top-ups, where owners get a
 * Receipt link per TOPUP entry: `receipts`).
 */
export function entriesTable(
  id: string,
  label: string,
  entries: WalletEntry[],
  currency: string,
  receipts = false,
): SafeHtml {
  return tableBox(
    label,
    html`<table id="${id}" class="stack-rows wallet-table">
<caption class="visually-hidden">${label}</caption>
<thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Source</th>
<th scope="col" class="num">Balance change</th><th scope="col" class="num">Held change</th>
<th scope="col" class="num">Balance after</th><th scope="col">Model</th><th scope="col">Request</th><th scope="col">Reason</th>${
      receipts ? html`<th scope="col">Receipt</th>` : null
    }</tr></thead>
<tbody>${entries.map((e) => entryRow(e, currency, receipts))}</tbody>
</table>`,
  );
}

/** The source filter and the other view's and the CSV's links, for `path` (either view). */
function filterForm(path: string, source: WalletSource | null, other: SafeHtml): SafeHtml {
  const options = WALLET_SOURCES.map(
    (x) => html`<option value="${x}"${x === source ? html` selected` : null}>${x}</option>`,
  );
  return html`<form class="filters" method="get" action="${path}">
  <label for="wallet-source">Source</label>
  <select id="wallet-source" name="source">
    <option value=""${source ? null : html` selected`}>All sources</option>
    ${options}
  </select>
  <button type="submit" class="secondary">Filter</button>
  ${other}
  <a href="/console/wallet.csv${source ? `?source=${source}` : ""}" download>Download CSV</a>
</form>`;
}

/** "Newest" (when paged) and "Older" (when there is more) for `path`. */
function pager(path: string, source: WalletSource | null, cursor: string | null, next: string | null) {
  const q = source ? `source=${source}&` : "";
  return html`<p class="pager">${cursor ? html`<a href="${path}${source ? `?source=${source}` : ""}">Newest</a> ` : null}${
    next ? html`<a href="${path}?${q}cursor=${next}" rel="next">Older</a>` : null
  }</p>`;
}

async function statementPage(kit: ConsoleKit, c: PageContext) {
  const s = requireAccount(c.session);
  const source = parseWalletSource(c.url.searchParams.get("source"));
  const cursor = c.url.searchParams.get("cursor");
  const page = await walletStatement(kit.ctx, s.accountId, { limit: WALLET_PAGE_SIZE, cursor, source });
  await lowPriorityTurn(); // read, now rendered (src/lib/low-priority.ts)
  const entries = html`<a href="/console/wallet/entries${source ? `?source=${source}` : ""}">All ledger entries</a>`;
  return c.layout({
    title: "Wallet",
    active: "wallet",
    body: html`<h1>Wallet</h1>
<p>One row per job and per top-up, newest first. A running job holds its price: it is not spent, and
the part it does not use comes back when it ends. An ended job shows what it was charged, or "Nothing
charged" if it failed or was canceled. "Balance after" is the running balance; each row's ledger
entries are one click away under it, and all of them in the entries view and the CSV.</p>
${filterForm("/console/wallet", source, entries)}
${page.rows.length ? statementTable(page.rows, page.currency) : empty("Nothing yet.")}
${pager("/console/wallet", source, cursor, page.next_cursor)}`,
  });
}

async function entriesPage(kit: ConsoleKit, c: PageContext) {
  const s = requireAccount(c.session);
  const source = parseWalletSource(c.url.searchParams.get("source"));
  const cursor = c.url.searchParams.get("cursor");
  const page = await walletPage(kit.ctx, s.accountId, { limit: WALLET_PAGE_SIZE, cursor, source });
  await lowPriorityTurn();
  const statement = html`<a href="/console/wallet${source ? `?source=${source}` : ""}">Statement</a>`;
  return c.layout({
    title: "Wallet entries",
    active: "wallet",
    body: html`<h1>Wallet entries</h1>
<p>Every movement of the balance, newest first. "Balance after" is the running balance; a hold moves money
from available to held while a job runs, its charge takes what the job cost and its release returns the rest.</p>
${filterForm("/console/wallet/entries", source, statement)}
${page.entries.length ? entriesTable("wallet", "Wallet entries", page.entries, page.currency) : empty("No entries.")}
${pager("/console/wallet/entries", source, cursor, page.next_cursor)}`,
  });
}

export function walletPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/wallet",
      kit.page(async (c) => await statementPage(kit, c)),
    )
    .get(
      "/console/wallet/entries",
      kit.page(async (c) => await entriesPage(kit, c)),
    )
    .get(
      "/console/wallet.csv",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const source = c.url.searchParams.get("source");
        const body = await walletCsv(kit.ctx, s.accountId, { source });
        return csvResponse(`wallet${source ? `-${source}` : ""}.csv`, body);
      }),
    );
}
