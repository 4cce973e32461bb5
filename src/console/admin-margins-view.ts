/**
 * The operator's Margins page's HTML (admin-margins-pages.ts): the range and grouping form, the
 * table with its totals (amounts by the console's one display rule, exact micro-USD in each
 * `<data value>`), and the link to the same rows as CSV.
 */
import type { MarginFigures, MarginReport } from "../admin/margins.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formError } from "./kit.ts";
import { empty, money, tableBox } from "./money-view.ts";

export interface MarginForm {
  from: string;
  to: string;
  by: string;
}

const GROUP_LABEL: Record<string, string> = { model: "Model", provider: "Provider", account: "Account" };

function cells(f: MarginFigures): SafeHtml {
  return html`<td data-label="Jobs" class="num">${f.jobs}</td>
  <td data-label="Revenue" class="num">${money(f.revenue_usd_micro, "USD")}</td>
  <td data-label="Cost" class="num">${money(f.cost_usd_micro, "USD")}</td>
  <td data-label="Margin" class="num">${money(f.margin_usd_micro, "USD")}</td>
  <td data-label="Cost unknown" class="num">${f.cost_unknown_jobs ? html`${f.cost_unknown_jobs} jobs, ${money(f.cost_unknown_revenue_usd_micro, "USD")}` : "—"}</td>`;
}

/**
 * The page shows at most this many rows (by account, a busy month can have thousands); the totals
 * are over every row, and the CSV has them all.
 */
export const PAGE_ROWS = 500;

function marginsTable(r: MarginReport): SafeHtml {
  const label = GROUP_LABEL[r.by] ?? r.by;
  const shown = r.data.slice(0, PAGE_ROWS);
  const table = html`<table class="stack-rows" id="margins">
<thead><tr><th scope="col">${label}</th><th scope="col" class="num">Jobs</th><th scope="col" class="num">Revenue</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Margin</th><th scope="col" class="num">Cost unknown</th></tr></thead>
<tbody>${shown.map(
    (l) => html`<tr>
  <td data-label="${label}"><span class="mono">${l.group}</span>${l.name ? html` <span class="hint">${l.name}</span>` : null}</td>
  ${cells(l)}
</tr>`,
  )}
<tr class="total"><td data-label="${label}"><strong>Total</strong></td>${cells(r.totals)}</tr></tbody></table>`;
  const cut =
    r.data.length > shown.length
      ? html`<p class="hint">The first ${shown.length} of ${r.data.length} rows; the total is over all of them, and the CSV has every row.</p>`
      : null;
  return html`${tableBox(`Margins by ${r.by}`, table)}${cut}`;
}

export function marginsBody(form: MarginForm, report: MarginReport | null, error: string | null): SafeHtml {
  const query = `from=${encodeURIComponent(form.from)}&to=${encodeURIComponent(form.to)}&by=${encodeURIComponent(form.by)}`;
  return html`<h1>Margins</h1>
<p class="hint">What the jobs that ended in the range were charged (in USD at each charge's own rate), what their
upstreams cost, and the margin. The margin counts only jobs whose cost is known: a route without a configured cost
leaves its jobs' cost unknown (not zero), shown apart. Failed jobs count only when the upstream billed them (a recorded
cost, no revenue).</p>
<form class="filters" method="get" action="/console/admin/margins" aria-label="Margins range">
  ${formError(error)}
  <label>From <input type="date" name="from" value="${form.from}" required aria-describedby="margins-dates-hint"></label>
  <label>To <input type="date" name="to" value="${form.to}" required aria-describedby="margins-dates-hint"></label>
  <label>By <select name="by">${Object.entries(GROUP_LABEL).map(
    ([v, l]) => html`<option value="${v}"${v === form.by ? html` selected` : null}>${l}</option>`,
  )}</select></label>
  <button type="submit">Show</button>
  <span class="hint" id="margins-dates-hint">Dates in UTC, both included; at most 366 days.</span>
</form>
${
  report
    ? html`${report.data.length ? marginsTable(report) : empty("No settled jobs ended in this range.")}
<p><a href="/console/admin/margins.csv?${query}" download>Download CSV</a> (the same rows, exact micro-USD).</p>`
    : null
}`;
}
