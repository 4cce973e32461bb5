/**
 * The requests pages' HTML (requests-pages.ts): the filter form, the list's rows, one request's
 * facts, price, outputs (previews, also the studio's) and timeline; times as "YYYY-MM-DD hh:mm:ss UTC".
 */
import type { ApiKeyRow } from "../accounts/store.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import {
  JOB_STATUSES,
  type RequestDetail,
  type RequestPrice,
  type RequestSummary,
} from "../queue/requests.ts";
import { formatMoney, unitsText } from "./format.ts";
import { type ConsoleKit, formError } from "./kit.ts";

/** "2026-11-23T15:04:05.123Z" -> "2026-11-23 15:04:05 UTC". */
export function isoText(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "";
}

export function statusBadge(status: string): SafeHtml {
  return html`<span class="status status-${status.toLowerCase()}">${status}</span>`;
}

function priceText(p: RequestPrice): string {
  if (p.charged_micro !== null) return formatMoney(p.charged_micro, p.currency);
  if (p.reserved_micro !== null) return `${formatMoney(p.reserved_micro, p.currency)} held`;
  return "";
}

export interface Filters {
  key: string;
  model: string;
  status: string;
  source: string;
}

export function query(f: Filters, cursor?: string | null): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return s ? `?${s}` : "";
}

function option(value: string, label: string, current: string): SafeHtml {
  return html`<option value="${value}"${value === current ? html` selected` : null}>${label}</option>`;
}

export function filterForm(keys: ApiKeyRow[], models: string[], f: Filters): SafeHtml {
  return html`<form class="filters" method="get" action="/console/requests">
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
    ${JOB_STATUSES.map((s) => option(s, s, f.status))}
  </select></label>
  <label>Source <select name="source">
    ${option("", "API and studio", f.source)}
    ${option("API", "API", f.source)}
    ${option("STUDIO", "Studio", f.source)}
  </select></label>
  <button type="submit">Filter</button>
  ${f.key || f.model || f.status || f.source ? html`<a href="/console/requests">Clear filters</a>` : null}
</form>`;
}

/** The operator's list across accounts (admin-requests-pages.ts): rows link there and name their account. */
export interface AcrossAccounts {
  /** Where the list and each request's page live ("/console/admin/requests"). */
  base: string;
  title: string;
  intro: string;
}

type Row = RequestSummary & { account_id?: string; account_name?: string };

function requestRows(items: Row[], across?: AcrossAccounts): SafeHtml {
  if (items.length === 0) return html`<p>No requests match.</p>`;
  return html`<div class="table-wrap"><table class="stack-rows">
<thead><tr><th scope="col">Created</th>${across ? html`<th scope="col">Account</th>` : null}<th scope="col">Model</th><th scope="col">Status</th><th scope="col">Source</th><th scope="col">Key</th><th scope="col" class="num">Price</th></tr></thead>
<tbody>
${items.map(
  (r) => html`<tr>
  <td data-label="Created"><a href="${across?.base ?? "/console/requests"}/${r.id}">${isoText(r.created_at)}</a></td>
  ${across ? html`<td data-label="Account"><a href="/console/admin/accounts/${r.account_id}">${r.account_name}</a></td>` : null}
  <td data-label="Model" class="mono">${r.model_id}</td>
  <td data-label="Status">${statusBadge(r.status)}${r.error_code ? html` <span class="hint">${r.error_code}</span>` : null}</td>
  <td data-label="Source">${r.source}</td>
  <td data-label="Key">${r.key_name ?? (r.key_id ? r.key_id : "—")}</td>
  <td data-label="Price" class="num">${priceText(r.price)}</td>
</tr>`,
)}
</tbody></table></div>`;
}

/** The list page's body: the filters (empty after an error), the error, a page of rows, the paging links. */
export function requestsBody(
  form: SafeHtml,
  f: Filters,
  cursor: string | null,
  page: { items: Row[]; next_cursor: string | null } | null,
  error: string | null,
  across?: AcrossAccounts,
): SafeHtml {
  const base = across?.base ?? "/console/requests";
  return html`<h1>${across?.title ?? "Requests"}</h1>
<p class="hint">${across?.intro ?? "Every request of this account, from the API and the studio, newest first."}</p>
${form}
${formError(error)}
${page ? requestRows(page.items, across) : null}
${
  page?.next_cursor
    ? html`<p><a class="button secondary" href="${base}${query(f, page.next_cursor)}">Older</a></p>`
    : null
}
${cursor && !error ? html`<p><a href="${base}${query(f)}">Newest</a></p>` : null}`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

/** An output's preview: only for links on this server's public origin (CSP: media-src 'self'). */
export function preview(
  kit: Pick<ConsoleKit, "origin">,
  o: RequestDetail["outputs"][number],
  modelId: string,
): SafeHtml {
  let sameOrigin = false;
  try {
    sameOrigin = new URL(o.url).origin === kit.origin;
  } catch {}
  const label = `Output ${o.index + 1} of ${modelId}`;
  let media: SafeHtml | null = null;
  if (sameOrigin) {
    if (o.content_type.startsWith("image/")) media = html`<img src="${o.url}" alt="${label}" loading="lazy">`;
    else if (o.content_type.startsWith("video/"))
      media = html`<video controls preload="metadata" src="${o.url}" aria-label="${label}"></video>`;
    else if (o.content_type.startsWith("audio/"))
      media = html`<audio controls preload="metadata" src="${o.url}" aria-label="${label}"></audio>`;
  }
  return html`<figure class="output">
  ${media}
  <figcaption><a href="${o.url}" download>Download output ${o.index + 1}</a>
  <span class="hint">${o.content_type}, ${o.size.toLocaleString("en-US")} bytes; the file is kept until ${isoText(o.expires_at)}</span></figcaption>
</figure>`;
}

function priceSection(d: RequestDetail): SafeHtml {
  const p = d.price;
  const money = (v: bigint | null, cur: string) => (v === null ? "—" : formatMoney(v, cur));
  return html`<h2>Price</h2>
<dl class="facts">
  <dt>Quoted</dt><dd>${formatMoney(p.quoted_usd_micro, "USD")}${p.units && p.unit ? html` <span class="hint">(${unitsText(p.units, p.unit)})</span>` : null}</dd>
  <dt>Reserved</dt><dd>${money(p.reserved_micro, p.currency)}</dd>
  <dt>Charged</dt><dd>${p.charged_micro === null ? "Not yet (the request is open)" : formatMoney(p.charged_micro, p.currency)}${p.actual_units && p.unit ? html` <span class="hint">(${unitsText(p.actual_units, p.unit)})</span>` : null}</dd>
  ${p.currency !== "USD" ? html`<dt>Charged in USD</dt><dd>${money(p.charged_usd_micro, "USD")}</dd>` : null}
  ${p.fx_rate_micro !== null ? html`<dt>Rate</dt><dd>${formatMoney(p.fx_rate_micro, p.currency)} per 1 USD</dd>` : null}
</dl>`;
}

/** One request's page body: facts, the failure, the price, outputs with previews, input, timeline. */
export function requestDetailBody(
  kit: Pick<ConsoleKit, "origin">,
  d: RequestDetail,
  /** The operator's view of any account's request: the account, and the way back to all accounts'. */
  account?: { id: string; name: string },
): SafeHtml {
  const nothingCharged = d.price.charged_micro === 0n;
  const failed = d.status === "FAILED" || d.status === "CANCELLED";
  return html`<p><a href="${account ? "/console/admin/requests" : "/console/requests"}">← All requests</a></p>
<h1>Request <span class="mono">${d.id}</span></h1>
<dl class="facts">
  ${account ? html`<dt>Account</dt><dd><a href="/console/admin/accounts/${account.id}">${account.name}</a></dd>` : null}
  <dt>Model</dt><dd class="mono">${d.model_id}</dd>
  <dt>Status</dt><dd>${statusBadge(d.status)}</dd>
  <dt>Source</dt><dd>${d.source}</dd>
  <dt>Key</dt><dd>${d.key_name ?? d.key_id ?? "—"}</dd>
  <dt>Created</dt><dd>${isoText(d.created_at)}</dd>
  ${d.completed_at ? html`<dt>Finished</dt><dd>${isoText(d.completed_at)}</dd>` : null}
  <dt>Attempts</dt><dd>${d.attempts}</dd>
</dl>
${
  failed
    ? html`<div class="notice error" role="alert"><p>${d.status === "FAILED" ? "This request failed" : "This request was cancelled"}${d.error ? html`: <span class="mono">${d.error.code}</span> ${d.error.message}` : "."}</p>
${nothingCharged ? html`<p>Nothing was charged: the reserved amount went back to the balance.</p>` : null}</div>`
    : null
}
${priceSection(d)}
${
  d.outputs.length
    ? html`<h2>Outputs</h2>
<p class="hint">Fresh signed links, valid 24 hours from now.</p>
<div class="outputs">${d.outputs.map((o) => preview(kit, o, d.model_id))}</div>`
    : null
}
${
  d.status === "COMPLETED" && d.output !== null
    ? html`<details${d.outputs.length ? null : html` open`}><summary>Output (JSON)</summary><pre class="json"><code>${json(d.output)}</code></pre></details>`
    : null
}
<h2>Input</h2>
<pre class="json"><code>${json(d.input)}</code></pre>
<h2>Timeline</h2>
<ol class="timeline">
${d.timeline.map(
  (e) =>
    html`<li><time datetime="${e.at}">${isoText(e.at)}</time> <strong>${e.event === "log" ? (e.level ?? "log") : e.event}</strong>${e.message ? html` <span>${e.message}</span>` : null}</li>`,
)}
</ol>
${d.usage ? html`<p class="hint">Tokens: ${d.usage.prompt_tokens} in, ${d.usage.completion_tokens} out.</p>` : null}`;
}
