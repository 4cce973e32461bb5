/**
 * The requests list's HTML (requests-pages.ts): the filter form, the figures over the filter, the
 * table of rows (also the operators' list across accounts: `requestTable` takes rows and may show
 * an Account column), its live refresh, and `Cancel request` on queued rows.
 */
import type { ApiKeyRow } from "../accounts/store.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { JOB_STATUSES } from "../queue/request-filters.ts";
import {
  type RequestStats,
  type RequestSummary,
  type RequestTiming,
  STATS_MAX_DAYS,
} from "../queue/requests.ts";
import { durationText, formatMoney } from "./format.ts";
import { formError } from "./kit.ts";
import { isoText, STATUS_WORDS, statusBadge } from "./requests-view.ts";

/** The list's filters as typed (the URL's query: a filtered page can be bookmarked). */
export interface Filters {
  key: string;
  model: string;
  status: string;
  source: string;
  /** Dates, "YYYY-MM-DD" (UTC), both included. */
  from: string;
  to: string;
  /** An exact request id (the page goes straight to it). */
  id: string;
}

export const NO_FILTERS: Filters = { key: "", model: "", status: "", source: "", from: "", to: "", id: "" };

/** The query string of a list page (the id filter is not kept: it leads away from the list). */
export function query(f: Filters, cursor?: string | null): string {
  const q = new URLSearchParams();
  for (const k of ["key", "model", "status", "source", "from", "to"] as const) if (f[k]) q.set(k, f[k]);
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return s ? `?${s}` : "";
}

function option(value: string, label: string, current: string): SafeHtml {
  return html`<option value="${value}"${value === current ? html` selected` : null}>${label}</option>`;
}

export function filterForm(keys: ApiKeyRow[], models: string[], f: Filters): SafeHtml {
  const any = Object.values(f).some((v) => v !== "");
  return html`<form class="filters" method="get" action="/console/requests">
  <label>Request id <input name="id" value="${f.id}" maxlength="64" autocomplete="off" spellcheck="false" class="mono"></label>
  <label>Key <select name="key">
    ${option("", "All keys", f.key)}
    ${keys.map((k) => option(k.id, `${k.name} (${k.prefix}…)${k.revoked_at !== null ? " revoked" : ""}`, f.key))}
  </select></label>
  <label>Model <select name="model">
    ${option("", "All models", f.model)}
    ${models.map((m) => option(m, m, f.model))}
  </select></label>
  <label>Status <select name="status">
    ${option("", "Any status", f.status)}
    ${JOB_STATUSES.map((s) => option(s, STATUS_WORDS[s] ?? s, f.status))}
  </select></label>
  <label>Source <select name="source">
    ${option("", "API and studio", f.source)}
    ${option("API", "API", f.source)}
    ${option("STUDIO", "Studio", f.source)}
  </select></label>
  <label>From <input type="date" name="from" value="${f.from}" aria-describedby="requests-dates-hint"></label>
  <label>To <input type="date" name="to" value="${f.to}" aria-describedby="requests-dates-hint"></label>
  <span class="hint" id="requests-dates-hint">Dates in UTC, both included.</span>
  <button type="submit">Filter</button>
  ${any ? html`<a href="/console/requests">Clear filters</a>` : null}
</form>`;
}

/** Failed among finished, as "12.5 %" (one decimal, rounded half up); null when nothing finished. */
export function errorRate(failed: number, finished: number): string | null {
  if (finished === 0) return null;
  const tenths = Math.floor((failed * 1000 + Math.floor(finished / 2)) / finished);
  return `${Math.floor(tenths / 10)}.${tenths % 10} %`;
}

/** The UTC days the figures cover, both included. */
function periodDays(st: RequestStats): { first: string; last: string } {
  return { first: st.from.slice(0, 10), last: new Date(Date.parse(st.until) - 1).toISOString().slice(0, 10) };
}

/**
 * What the figures cover: whole UTC days (the rollup's, JobStatsStore): "Last 31 days" without
 * dates (today included), else the days (both included), and when the range was longer (or had no
 * From), that only its last 31 days are counted.
 */
function periodTitle(st: RequestStats): string {
  const { first, last } = periodDays(st);
  if (!st.ranged) return `Last ${STATS_MAX_DAYS} days (UTC, today included)`;
  const days = first === last ? first : `${first} to ${last}`;
  return `${days} (UTC)${st.clipped ? `: the last ${STATS_MAX_DAYS} days of the range` : ""}`;
}

/** The figures above the list: requests, error rate (with its counts), latency p50 and p95. */
export function statsBox(st: RequestStats): SafeHtml {
  const finished = st.completed + st.failed;
  const rate = errorRate(st.failed, finished);
  // A percentile is its latency bucket's upper bound: at most 9 % above the exact figure.
  const latency = (ms: number | null) => (ms === null ? "—" : `about ${durationText(ms)}`);
  const { first, last } = periodDays(st);
  return html`<section class="request-stats" aria-labelledby="request-stats-title">
<h2 id="request-stats-title">${periodTitle(st)}</h2>
<dl class="stats">
  <div><dt>Requests</dt><dd data-stat="requests">${st.total}</dd></div>
  <div><dt>Error rate</dt><dd data-stat="error-rate">${rate ?? "—"} <span class="hint stat-note">${st.failed} failed of ${finished} finished</span></dd></div>
  <div><dt>Latency p50</dt><dd data-stat="p50">${latency(st.p50_ms)}</dd></div>
  <div><dt>Latency p95</dt><dd data-stat="p95">${latency(st.p95_ms)}</dd></div>
</dl>
<p class="hint">Whole UTC days, ${first} to ${last} (both included), over the filters above (at most ${STATS_MAX_DAYS} days). Finished: succeeded or failed (${st.cancelled} cancelled and ${st.open} still open are not in the rate or the latency). Latency is the Duration, submit to end; each percentile is rounded up to its bucket's bound, at most 9 % above the exact figure.</p>
</section>`;
}

function priceText(p: RequestSummary["price"]): string {
  if (p.charged_micro !== null) return formatMoney(p.charged_micro, p.currency);
  if (p.reserved_micro !== null) return `${formatMoney(p.reserved_micro, p.currency)} held`;
  return "";
}

/** Duration, then the queued and running times beside it. */
export function durationCell(t: RequestTiming): SafeHtml {
  return html`${durationText(t.total_ms)}${t.live ? html` <span class="hint">so far</span>` : null}
<span class="hint duration-parts">queued ${durationText(t.queued_ms)}${t.running_ms === null ? null : html`, running ${durationText(t.running_ms)}`}</span>`;
}

/**
 * `Cancel request`: a one-button POST form (CSRF); `back` is the page to return to. Its name is
 * exactly `Cancel request` on every row, as `Revoke` is on the keys page: the row says which.
 */
export function cancelForm(id: string, csrf: SafeHtml, back: string): SafeHtml {
  return html`<form class="inline" method="post" action="/console/requests/${id}/cancel">${csrf}<input type="hidden" name="back" value="${back}"><button type="submit" class="secondary">Cancel request</button></form>`;
}

export interface TableOptions {
  /** The session's CSRF field: queued rows get `Cancel request`; null: no actions. */
  csrf: SafeHtml | null;
  /** The page a cancel returns to. */
  back: string;
  /** Show an Account column, naming each row's account (the operators' list). */
  account?: (r: RequestSummary) => SafeHtml | string;
  /** Where each request's page lives (default /console/requests; the operators' list: its own). */
  base?: string;
}

/** One row (its id lets the live refresh replace it in place). */
export function requestRow(r: RequestSummary, o: TableOptions, oob = false): SafeHtml {
  const cancel = o.csrf && r.status === "IN_QUEUE" ? cancelForm(r.id, o.csrf, o.back) : null;
  return html`<tr id="request-${r.id}"${oob ? html` hx-swap-oob="true"` : null}${r.timing.live ? html` data-live` : null}>
  <td data-label="Created"><a href="${o.base ?? "/console/requests"}/${r.id}">${isoText(r.created_at)}</a></td>
  ${o.account ? html`<td data-label="Account">${o.account(r)}</td>` : null}
  <td data-label="Model" class="mono">${r.model_id}</td>
  <td data-label="Status">${statusBadge(r.status)}${r.error_code ? html` <span class="hint">${r.error_code}</span>` : null}</td>
  <td data-label="Duration">${durationCell(r.timing)}</td>
  <td data-label="Source">${r.source}</td>
  <td data-label="Key">${r.key_name ?? (r.key_id ? r.key_id : "—")}</td>
  <td data-label="Price" class="num">${priceText(r.price)}</td>
  ${o.csrf ? html`<td data-label="Actions">${cancel}</td>` : null}
</tr>`;
}

/** The table of rows, or "No requests match." */
export function requestTable(items: RequestSummary[], o: TableOptions): SafeHtml {
  if (items.length === 0) return html`<p>No requests match.</p>`;
  return html`<div class="table-wrap"><table class="stack-rows requests">
<thead><tr><th scope="col">Created</th>${o.account ? html`<th scope="col">Account</th>` : null}<th scope="col">Model</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Source</th><th scope="col">Key</th><th scope="col" class="num">Price</th>${o.csrf ? html`<th scope="col">Actions</th>` : null}</tr></thead>
<tbody>
${items.map((r) => requestRow(r, o))}
</tbody></table></div>`;
}

/**
 * The live refresh: while rows are queued or running, htmx asks every 2 s for those rows
 * (`/console/requests/live?ids=...`), whose answer replaces each row in place (hx-swap-oob) and
 * this element; once none is live the element comes back without a trigger, and polling stops.
 */
export function livePoller(items: readonly Pick<RequestSummary, "id" | "timing">[], back: string): SafeHtml {
  const live = items.filter((r) => r.timing.live).map((r) => r.id);
  if (live.length === 0) return html`<div id="requests-live" hidden></div>`;
  const q = new URLSearchParams({ ids: live.join(","), back });
  return html`<div id="requests-live" hidden hx-get="/console/requests/live?${q.toString()}" hx-trigger="every 2s" hx-swap="outerHTML"></div>`;
}

/** The live refresh's answer: the poller again (or stopped) and each row, swapped in by id. */
export function liveRows(items: RequestSummary[], o: TableOptions): SafeHtml {
  return html`${livePoller(items, o.back)}
${items.map((r) => html`<template>${requestRow(r, o, true)}</template>`)}`;
}

/** A notice after a cancel (from a fixed list: nothing of the URL but a checked id is shown). */
export type CancelNotice = { kind: "cancelled" | "not-cancellable"; id: string; status: string | null };

/** Why a cancel was refused, by the status the request had by then. */
const NOT_CANCELLABLE: Readonly<Record<string, string>> = {
  IN_PROGRESS: "it is already running",
  COMPLETED: "it has already succeeded",
  FAILED: "it has already failed",
  CANCELLED: "it was already cancelled",
};

export function cancelNotice(n: CancelNotice | null): SafeHtml | null {
  if (!n) return null;
  if (n.kind === "cancelled")
    return html`<div class="notice ok" role="status"><p>Request <span class="mono">${n.id}</span> was cancelled. Nothing was charged: its hold went back to the balance.</p></div>`;
  return html`<div class="notice error" role="alert"><p>Request <span class="mono">${n.id}</span> was not cancelled: ${NOT_CANCELLABLE[n.status ?? ""] ?? "it is no longer queued"}. Only a queued request can be cancelled.</p></div>`;
}

/** The list page's body: the filters, the error, the figures, a page of rows, the paging links. */
export function requestsBody(p: {
  form: SafeHtml;
  filters: Filters;
  cursor: string | null;
  page: { items: RequestSummary[]; next_cursor: string | null } | null;
  stats: RequestStats | null;
  error: string | null;
  notice: CancelNotice | null;
  csrf: SafeHtml;
  back: string;
}): SafeHtml {
  const { filters: f, page } = p;
  const table = { csrf: p.csrf, back: p.back };
  return html`<h1>Requests</h1>
<p class="hint">Every request of this account, from the API and the studio, newest first. Queued and running rows update by themselves.</p>
${cancelNotice(p.notice)}
${p.form}
${formError(p.error)}
${p.stats ? statsBox(p.stats) : null}
${page ? html`${requestTable(page.items, table)}${livePoller(page.items, p.back)}` : null}
${
  page?.next_cursor
    ? html`<p><a class="button secondary" href="/console/requests${query(f, page.next_cursor)}">Older</a></p>`
    : null
}
${p.cursor && !p.error ? html`<p><a href="/console/requests${query(f)}">Newest</a></p>` : null}
${p.error ? null : html`<p><a href="/console/requests.csv${query(f)}" download>Download CSV</a> (every request under these filters, newest first).</p>`}`;
}
