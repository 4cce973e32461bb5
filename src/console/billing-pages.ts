/**
 * Billing (`/console/billing`): balance, held and available, and the wallet's top-ups, from
 * billing() (src/ledger/figures.ts). Topping up is the operator's today (issue 16 adds redeem codes
 * and payments): the page says so and offers no button that does nothing.
 */
import { Elysia } from "elysia";
import { billing } from "../ledger/figures.ts";
import { html } from "../lib/html.ts";
import { redeemSection } from "./billing-redeem.ts";
import { type ConsoleKit, requireAccount } from "./kit.ts";
import { empty, money } from "./money-view.ts";
import { entriesTable, WALLET_PAGE_SIZE } from "./wallet-pages.ts";

export function billingPages(kit: ConsoleKit) {
  return new Elysia().get(
    "/console/billing",
    kit.page((c) => {
      const s = requireAccount(c.session);
      const cursor = c.url.searchParams.get("cursor");
      const b = billing(kit.ctx, s.accountId, { limit: WALLET_PAGE_SIZE, cursor });
      const cur = b.currency;
      return c.layout({
        title: "Billing",
        active: "billing",
        body: html`<h1>Billing</h1>
<div class="cards">
  <div class="card" id="balance"><div class="hint">Balance</div><div class="figure">${money(b.balance_micro, cur)}</div></div>
  <div class="card" id="held"><div class="hint">Held by running jobs</div><div class="figure">${money(b.held_micro, cur)}</div></div>
  <div class="card" id="available"><div class="hint">Available</div><div class="figure">${money(b.available_micro, cur)}</div></div>
</div>
${redeemSection(kit, c)}
<h2>Top up</h2>
<p>The balance is prepaid in ${cur}. To add money, ask the operator of this gengate: they credit the account,
and the credit appears below and in the <a href="/console/wallet">wallet</a> (source ADMIN). Redeem codes and card
payments come in a later release.</p>
<h2>Top-ups</h2>
${b.topups.length ? entriesTable("topups", "Top-ups", b.topups, cur) : empty("No top-ups yet.")}
<p class="pager">${cursor ? html`<a href="/console/billing">Newest</a> ` : null}${
          b.next_cursor ? html`<a href="/console/billing?cursor=${b.next_cursor}" rel="next">Older</a>` : null
        }</p>`,
      });
    }),
  );
}
