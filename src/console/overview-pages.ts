/**
 * Overview (`/console`): balance, held and available; this month's spend (UTC); each key against
 * its monthly limit; spend by model; the low-balance notice. Every figure from `overview()`
 * (src/ledger/figures.ts), the numbers GET /v1/account and /v1/account/spend give.
 */
import { Elysia } from "elysia";
import { type KeyFigures, type Overview, overview } from "../ledger/figures.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { type ConsoleKit, requireAccount } from "./kit.ts";
import { empty, money, tableBox } from "./money-view.ts";

function card(label: string, figure: SafeHtml, id: string, hint?: string): SafeHtml {
  return html`<div class="card" id="${id}"><div class="hint">${label}</div><div class="figure">${figure}</div>${hint ? html`<div class="hint">${hint}</div>` : null}</div>`;
}

/** "12.50 USD of 100.00 USD (12%)" next to a meter; spend without a limit has no meter. */
function keyMeter(k: KeyFigures, currency: string): SafeHtml {
  if (k.monthly_limit_micro === null)
    return html`${money(k.spent_micro, currency)} <span class="hint">(no limit)</span>`;
  const limit = k.monthly_limit_micro;
  const used = k.spent_micro + k.held_micro;
  const pct = limit === 0n ? 100n : (used * 100n) / limit;
  return html`<meter min="0" max="${limit === 0n ? 1n : limit}" value="${used > limit ? limit : used}"
    aria-label="${k.name}: ${pct}% of the monthly limit"></meter>
  ${money(k.spent_micro, currency)} of ${money(limit, currency)}
  <span class="hint">(${pct}%${k.held_micro > 0n ? html`, ${money(k.held_micro, currency)} held` : null})</span>`;
}

export function overviewBody(o: Overview): SafeHtml {
  const c = o.currency;
  const alert =
    o.alert.below && o.alert.threshold_micro !== null
      ? html`<p class="notice warn" role="status" id="low-balance">The balance is below this account's alert threshold of
  ${money(o.alert.threshold_micro, c)}. <a href="/console/billing">Top up on the Billing page</a>.</p>`
      : null;
  const liveKeys = o.keys.filter((k) => k.state === "active" || k.spent_micro > 0n);
  // The studio's runs and chats have no key: their row makes the table add up to "Spent" (issue 34:
  // keys summed to 0.387 of a 0.869 month, the rest was studio spend shown nowhere on this page).
  const studio =
    o.keyless_spent_micro > 0n
      ? html`<tr data-key="studio">
  <th scope="row">Studio <span class="hint">(runs and chats in the console, no key)</span></th>
  <td data-spent>${money(o.keyless_spent_micro, c)}</td>
  <td class="num"><span class="hint">no limit</span></td>
</tr>`
      : null;
  const keys =
    liveKeys.length || studio
      ? tableBox(
          "Spend per key",
          html`<table id="key-spend">
<caption class="visually-hidden">Spend per key this month</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Spent this month against the limit</th><th scope="col" class="num">Left</th></tr></thead>
<tbody>${liveKeys.map(
            (k) => html`<tr data-key="${k.key_id}">
  <th scope="row">${k.name} <span class="hint mono">${k.prefix}…</span>${k.state === "revoked" ? html` <span class="hint">(revoked)</span>` : null}</th>
  <td data-spent>${keyMeter(k, c)}</td>
  <td class="num">${k.remaining_micro === null ? html`<span class="hint">no limit</span>` : money(k.remaining_micro, c)}</td>
</tr>`,
          )}${studio}</tbody>
<tfoot><tr><th scope="row">All spend this month</th><td data-spent>${money(o.month_spent_micro, c)}</td><td></td></tr></tfoot>
</table>`,
        )
      : empty("No keys yet.");
  const models = o.by_model.length
    ? tableBox(
        "Spend by model",
        html`<table id="model-spend">
<caption class="visually-hidden">Spend by model this month</caption>
<thead><tr><th scope="col">Model</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${o.by_model.map(
          (m) => html`<tr data-model="${m.model_id}">
  <th scope="row" class="mono">${m.model_id || "(no model)"}</th>
  <td class="num">${m.calls}</td>
  <td class="num">${money(m.spent_micro, c)}</td>
</tr>`,
        )}</tbody>
</table>`,
      )
    : empty("Nothing spent this month yet.");
  // A new account with no money: where to add some, before anything else.
  const noMoney =
    o.balance_micro <= 0n
      ? html`<p class="notice" id="add-money">This account has no money yet: runs and API calls are paid from its balance.
  <a href="/console/billing">Add money on the Billing page</a> (a card payment or a redeem code).</p>`
      : null;
  return html`<h1>Overview <span class="hint">${o.name}</span></h1>
${noMoney}${alert}
<div class="cards">
  ${card("Balance", money(o.balance_micro, c), "balance")}
  ${card("Held by running jobs", money(o.held_micro, c), "held")}
  ${card("Available", money(o.available_micro, c), "available", "Balance minus held: what new jobs can use.")}
  ${card(`Spent in ${o.month} (UTC)`, money(o.month_spent_micro, c), "month-spent")}
</div>
<h2>Keys this month</h2>
${keys}
<p><a href="/console/keys">Manage keys</a></p>
<h2>Spend by model this month</h2>
${models}
<p><a href="/console/usage">Usage by day and month</a></p>`;
}

export function overviewPages(kit: ConsoleKit) {
  return new Elysia().get(
    "/console",
    kit.page(async (c) => {
      const s = requireAccount(c.session);
      const o = await overview(kit.ctx, s.accountId);
      await lowPriorityTurn(); // read, now rendered (src/lib/low-priority.ts)
      return c.layout({ title: "Overview", active: "overview", body: overviewBody(o) });
    }),
  );
}
