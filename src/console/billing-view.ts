/**
 * The billing page's body (`/console/billing`): balance, held and available, redeeming a code,
 * paying, and the wallet's top-ups, from billing() (src/ledger/figures.ts). Answered by the GET
 * (billing-pages.ts) and again by a refused redeem (billing-redeem-pages.ts, with what was typed).
 */
import { billing } from "../ledger/figures.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { checkoutSection, ordersSection } from "./billing-checkout-view.ts";
import { type RedeemRefusal, redeemSection } from "./billing-redeem-view.ts";
import { type ConsoleKit, type PageContext, requireAccount } from "./kit.ts";
import { empty, money } from "./money-view.ts";
import { entriesTable, WALLET_PAGE_SIZE } from "./wallet-pages.ts";

export async function billingPage(
  kit: ConsoleKit,
  c: PageContext,
  refused: RedeemRefusal | null = null,
): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const cursor = c.url.searchParams.get("cursor");
  const b = await billing(kit.ctx, s.accountId, { limit: WALLET_PAGE_SIZE, cursor });
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
${await redeemSection(kit, c, refused)}
${await checkoutSection(kit, s)}${await ordersSection(kit, s)}
<h2>Top-ups</h2>
${b.topups.length ? entriesTable("topups", "Top-ups", b.topups, cur, s.role === "owner") : empty("No top-ups yet.")}
<p class="pager">${cursor ? html`<a href="/console/billing">Newest</a> ` : null}${
      b.next_cursor ? html`<a href="/console/billing?cursor=${b.next_cursor}" rel="next">Older</a>` : null
    }</p>`,
  });
}
