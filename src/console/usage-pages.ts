/**
 * Usage (`/console/usage`): spend per model or per key, per day (last 30 days) or per month (last
 * 12), as a uPlot chart and a table of the same figures, and `/console/usage.csv`. Everything from
 * `usage()`, `usageSeries()` and `usageCsv()` (src/ledger/figures.ts): the ledger's charges, the
 * numbers GET /v1/account/spend gives for a whole month.
 */
import { Elysia } from "elysia";
import { lastDays, lastMonths, type Usage, usage, usageCsv, usageSeries } from "../ledger/figures.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { type ConsoleKit, requireAccount } from "./kit.ts";
import { chartData, csvResponse, empty, money, tableBox } from "./money-view.ts";

type Period = "day" | "month";
type By = "model" | "key";

export const USAGE_DAYS = 30;
export const USAGE_MONTHS = 12;

function choice<T extends string>(url: URL, name: string, allowed: readonly T[]): T {
  const v = url.searchParams.get(name);
  if (v === null || v === "") return allowed[0]!;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new DomainError("validation_error", `${name} must be one of ${allowed.join(", ")}.`, {
      param: name,
    });
  }
  return v as T;
}

/** The view a URL asks for, and the usage figures of its range. */
async function read(kit: ConsoleKit, accountId: string, url: URL) {
  const period = choice<Period>(url, "period", ["day", "month"]);
  const by = choice<By>(url, "by", ["model", "key"]);
  const range = period === "day" ? lastDays(kit.ctx, USAGE_DAYS) : lastMonths(kit.ctx, USAGE_MONTHS);
  return { period, by, u: await usage(kit.ctx, accountId, range) };
}

/** "2026-11-05" or "2026-11" -> epoch seconds of its first instant (UTC), for the chart's x axis. */
const epochOf = (label: string) =>
  Date.parse(label.length === 7 ? `${label}-01T00:00:00Z` : `${label}T00:00:00Z`) / 1000;

function switcher(period: Period, by: By): SafeHtml {
  const link = (p: Period, b: By, text: string, current: boolean) =>
    html`<a href="/console/usage?period=${p}&amp;by=${b}"${current ? html` aria-current="true"` : null}>${text}</a>`;
  return html`<nav class="switcher" aria-label="Usage view">
  <span>Group by: ${link(period, "model", "Model", by === "model")} · ${link(period, "key", "Key", by === "key")}</span>
  <span>Period: ${link("day", by, `Day (last ${USAGE_DAYS})`, period === "day")} · ${link("month", by, `Month (last ${USAGE_MONTHS})`, period === "month")}</span>
</nav>`;
}

export function usageBody(u: Usage, period: Period, by: By): SafeHtml {
  const c = u.currency;
  const s = usageSeries(u, period, by);
  const totals = s.labels.map((_, i) => s.series.reduce((sum, x) => sum + x.values[i]!, 0n));
  const what = by === "model" ? "model" : "key";
  const chart = s.series.length
    ? html`<div class="chart" data-chart="usage-data" role="img" aria-label="Chart of spend in ${c} per ${what} per ${period}; the table below has the same figures"></div>
${chartData("usage-data", {
  x: s.labels.map(epochOf),
  x_label: period === "day" ? "Day" : "Month",
  series: s.series.map((x) => ({ label: x.name || "(no model)", values: x.values })),
  unit: c,
})}`
    : empty(`Nothing spent from ${u.from} to ${u.to}.`);
  const table = tableBox(
    `Spend per ${what} per ${period}`,
    html`<table id="usage-table">
<caption>Spend per ${what} per ${period}, ${u.from} to ${u.to} (UTC)</caption>
<thead><tr><th scope="col">${period === "day" ? "Day" : "Month"}</th>${s.series.map(
      (x) => html`<th scope="col" class="num">${x.name || "(no model)"}</th>`,
    )}<th scope="col" class="num">Total</th></tr></thead>
<tbody>${s.labels.map(
      (label, i) =>
        html`<tr data-period="${label}"><th scope="row">${label}</th>${s.series.map(
          (x) => html`<td class="num">${money(x.values[i]!, c)}</td>`,
        )}<td class="num" data-total>${money(totals[i]!, c)}</td></tr>`,
    )}</tbody>
<tfoot><tr><th scope="row">Total</th>${s.series.map(
      (x) =>
        html`<td class="num">${money(
          x.values.reduce((a, b) => a + b, 0n),
          c,
        )}</td>`,
    )}<td class="num" id="usage-total">${money(u.total_micro, c)}</td></tr></tfoot>
</table>`,
  );
  const lines =
    by === "model"
      ? u.by_model.map((m) => ({
          id: m.model_id,
          name: m.model_id || "(no model)",
          spent: m.spent_micro,
          calls: m.calls,
        }))
      : u.by_key.map((k) => ({ id: k.key_id ?? "", name: k.key_name, spent: k.spent_micro, calls: k.calls }));
  const summary = lines.length
    ? tableBox(
        `Total per ${what}`,
        html`<table id="usage-summary">
<caption>Total per ${what}, ${u.from} to ${u.to}</caption>
<thead><tr><th scope="col">${by === "model" ? "Model" : "Key"}</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${lines.map(
          (l) =>
            html`<tr data-${what}="${l.id}"><th scope="row">${l.name}</th><td class="num">${l.calls}</td><td class="num">${money(l.spent, c)}</td></tr>`,
        )}</tbody>
</table>`,
      )
    : null;
  return html`<h1>Usage</h1>
${switcher(period, by)}
<p>${u.from} to ${u.to} (UTC): <strong>${money(u.total_micro, c)}</strong> in ${u.calls} charged calls.
<a href="/console/usage.csv?period=${period}" download>Download CSV</a> (every day, key and model of this range).</p>
${chart}
${table}
${summary}`;
}

export function usagePages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/usage",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const { period, by, u } = await read(kit, s.accountId, c.url);
        await lowPriorityTurn(); // read, now rendered (src/lib/low-priority.ts)
        return c.layout({ title: "Usage", active: "usage", body: usageBody(u, period, by) });
      }),
    )
    .get(
      "/console/usage.csv",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const { u } = await read(kit, s.accountId, c.url);
        return csvResponse(`usage-${u.from}-${u.to}.csv`, usageCsv(u));
      }),
    );
}
