/**
 * The operator's providers and exchange-rate pages' HTML (admin-providers-pages.ts): each provider's
 * circuit and recent calls, the rates with the form that sets one.
 */
import type { providerHealth } from "../admin/providers.ts";
import { FX_CURRENCIES, type FxRate } from "../fx/store.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import type { ConsoleSession } from "../people/types.ts";
import { notice } from "./admin-view.ts";
import { durationText, formatTime } from "./format.ts";
import { formError } from "./kit.ts";
import { csrfField } from "./layout.ts";

export function providersBody(rows: ReturnType<typeof providerHealth>): SafeHtml {
  return html`<h1>Providers</h1>
<p class="hint">Each provider's circuit: after repeated upstream failures it opens, and new requests for its models
are refused (503, nothing reserved) until a trial request succeeds. The same figures as /readyz and GET /admin/v1/providers.</p>
${
  rows.length
    ? html`<div class="table-wrap"><table class="stack-rows" id="providers">
<thead><tr><th scope="col">Provider</th><th scope="col">Type</th><th scope="col" class="num">Models</th><th scope="col">Circuit</th><th scope="col" class="num">Consecutive failures</th><th scope="col" class="num">Calls (15 min)</th><th scope="col" class="num">Error rate</th><th scope="col" class="num">Latency p50</th></tr></thead>
<tbody>${rows.map(
        (r) => html`<tr>
  <td data-label="Provider" class="mono">${r.name}</td><td data-label="Type">${r.type}</td><td data-label="Models" class="num">${r.models.length}</td>
  <td data-label="Circuit">${r.healthy ? "healthy (closed)" : r.state === "open" ? "unhealthy (open)" : "trial (half open)"}</td>
  <td data-label="Consecutive failures" class="num">${r.consecutive_failures}</td>
  <td data-label="Calls (15 min)" class="num">${r.recent_calls}</td>
  <td data-label="Error rate" class="num">${r.error_rate === null ? "—" : `${(r.error_rate * 100).toFixed(1)}%`}</td>
  <td data-label="Latency p50" class="num">${r.latency_p50_ms === null ? "—" : durationText(r.latency_p50_ms)}</td>
</tr>`,
      )}</tbody></table></div>
<p class="hint">Calls, error rate and median latency: the calls that ended in the last 15 minutes (at most the last 1000) on
this instance, since its start. Latency is a media job's whole run on the upstream, a chat call's time to its first piece.
A refused input is an answer, not an error.</p>`
    : html`<p>No upstream providers are configured (only the sandbox models run).</p>`
}`;
}

export function fxBody(
  session: ConsoleSession,
  rates: Map<string, FxRate>,
  done: string | null,
  state: { rate?: string; error?: string | null },
): SafeHtml {
  return html`<h1>Exchange rates</h1>
${notice(done)}
<p class="hint">Prices are quoted in USD; RUB accounts are charged at the rate fixed when each request was reserved.
New reservations use the current rate; open holds keep theirs.</p>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Currency</th><th scope="col" class="num">Per 1 USD</th><th scope="col">Source</th><th scope="col">Set at</th></tr></thead>
<tbody>${FX_CURRENCIES.map((cur) => {
    const r = rates.get(cur);
    return html`<tr><td>USD→${cur}</td><td class="num">${r ? formatMicro(r.rate_micro) : "not set"}</td>
<td>${r?.source ?? "—"}</td><td>${r ? formatTime(r.updated_at) : "—"}</td></tr>`;
  })}</tbody></table></div>
<h2 id="fx-heading">Set a rate</h2>
<form class="stack" method="post" action="/console/admin/fx" aria-labelledby="fx-heading">
  ${csrfField(session)}
  ${formError(state.error)}
  <label>Currency <select name="currency">${FX_CURRENCIES.map((cur) => html`<option value="${cur}">${cur}</option>`)}</select></label>
  <label>Rate <span class="hint">Units of the currency per 1 USD, e.g. 92.5 (at most 6 decimals).</span>
    <input name="rate" inputmode="decimal" required maxlength="40" value="${state.rate ?? ""}" autocomplete="off"></label>
  <button type="submit">Set rate</button>
</form>`;
}
