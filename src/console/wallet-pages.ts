/**
 * Wallet (`/console/wallet`): the ledger's entries newest first with the running balance stored
 * with each, their kind and source (API, STUDIO, ADMIN, TOPUP), model, request and reason; a source
 * filter, cursor paging ("Older"), and `/console/wallet.csv`. From walletPage() and walletCsv()
 * (src/ledger/figures.ts).
 */
import { Elysia } from "elysia";
import { parseWalletSource, type WalletEntry, walletCsv, walletPage } from "../ledger/figures.ts";
import { WALLET_SOURCES } from "../ledger/wallet.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { type ConsoleKit, requireAccount } from "./kit.ts";
import { csvResponse, empty, money, tableBox, when } from "./money-view.ts";

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

export function walletPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/wallet",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const source = parseWalletSource(c.url.searchParams.get("source"));
        const cursor = c.url.searchParams.get("cursor");
        const page = await walletPage(kit.ctx, s.accountId, { limit: WALLET_PAGE_SIZE, cursor, source });
        const q = source ? `source=${source}&` : "";
        const options = WALLET_SOURCES.map(
          (x) => html`<option value="${x}"${x === source ? html` selected` : null}>${x}</option>`,
        );
        return c.layout({
          title: "Wallet",
          active: "wallet",
          body: html`<h1>Wallet</h1>
<p>Every movement of the balance, newest first. "Balance after" is the running balance; a hold moves money
from available to held while a job runs, its charge takes what the job cost and its release returns the rest.</p>
<form class="filters" method="get" action="/console/wallet">
  <label for="wallet-source">Source</label>
  <select id="wallet-source" name="source">
    <option value=""${source ? null : html` selected`}>All sources</option>
    ${options}
  </select>
  <button type="submit" class="secondary">Filter</button>
  <a href="/console/wallet.csv${source ? `?source=${source}` : ""}" download>Download CSV</a>
</form>
${page.entries.length ? entriesTable("wallet", "Wallet entries", page.entries, page.currency) : empty("No entries.")}
<p class="pager">${cursor ? html`<a href="/console/wallet${source ? `?source=${source}` : ""}">Newest</a> ` : null}${
            page.next_cursor
              ? html`<a href="/console/wallet?${q}cursor=${page.next_cursor}" rel="next">Older</a>`
              : null
          }</p>`,
        });
      }),
    )
    .get(
      "/console/wallet.csv",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const source = c.url.searchParams.get("source");
        const text = await walletCsv(kit.ctx, s.accountId, { source });
        return csvResponse(`wallet${source ? `-${source}` : ""}.csv`, text);
      }),
    );
}
