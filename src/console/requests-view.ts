/**
 * One request's page (requests-pages.ts): facts, price, outputs (previews, also the studio's) and
 * timeline; the status badge; times as "YYYY-MM-DD hh:mm:ss UTC". The list is requests-list-view.ts.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import type { OperatorRoute } from "../queue/all-requests.ts";
import type { RequestDetail, RequestSummary } from "../queue/requests.ts";
import { durationText, formatMoney, unitsText } from "./format.ts";
import type { ConsoleKit } from "./kit.ts";

/** "2026-11-23T15:04:05.123Z" -> "2026-11-23 15:04:05 UTC". */
export function isoText(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "";
}

/** What each status reads as on a badge (the API's status stays in `data-status`). */
export const STATUS_WORDS: Readonly<Record<string, string>> = {
  IN_QUEUE: "Queued",
  IN_PROGRESS: "Running",
  COMPLETED: "Succeeded",
  FAILED: "Failed",
  CANCELLED: "Cancelled",
};

/**
 * A status as a badge: its word in text (never colour alone), a colour and a mark of its own
 * (console-studio.css `.status-*`, AA contrast in light and dark).
 */
export function statusBadge(status: string): SafeHtml {
  return html`<span class="status status-${status.toLowerCase()}" data-status="${status}">${STATUS_WORDS[status] ?? status}</span>`;
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

/**
 * The facts that change while a request is open: status, durations, `Cancel request` while queued.
 * While it is live, htmx re-reads them every 2 s (`/console/requests/<id>/live`); the answer for a
 * request that reached its final state reloads the page (HX-Refresh), which then shows the outputs.
 */
export function liveFacts(d: RequestSummary, cancel: SafeHtml | null, poll = true): SafeHtml {
  const t = d.timing;
  return html`<div id="request-live"${t.live && poll ? html` hx-get="/console/requests/${d.id}/live" hx-trigger="every 2s" hx-swap="outerHTML"` : null}>
<dl class="facts request-facts">
  <dt>Status</dt><dd>${statusBadge(d.status)}</dd>
  <dt>Duration</dt><dd>${durationText(t.total_ms)}${t.live ? " so far" : null}</dd>
  <dt>Queued</dt><dd>${durationText(t.queued_ms)}</dd>
  <dt>Running</dt><dd>${t.running_ms === null ? "Not started" : durationText(t.running_ms)}</dd>
</dl>
${d.status === "IN_QUEUE" ? cancel : null}
</div>`;
}

/** One request's page body: facts, the failure, the price, outputs with previews, input, timeline. */
export function requestDetailBody(
  kit: Pick<ConsoleKit, "origin">,
  d: RequestDetail,
  live: { cancel: SafeHtml | null; notice: SafeHtml | null },
  /**
   * The operator's view of any account's request (admin-requests-pages.ts): the account is named,
   * the way back leads to all accounts' requests, and the facts do not poll (the live route is the
   * account's own).
   */
  account?: { id: string; name: string; route?: OperatorRoute },
): SafeHtml {
  const route = account?.route;
  const nothingCharged = d.price.charged_micro === 0n;
  const failed = d.status === "FAILED" || d.status === "CANCELLED";
  return html`<p><a href="${account ? "/console/admin/requests" : "/console/requests"}">← All requests</a></p>
<h1>Request <span class="mono">${d.id}</span></h1>
${live.notice}
${liveFacts(d, live.cancel, !account)}
<dl class="facts request-facts">
  ${account ? html`<dt>Account</dt><dd><a href="/console/admin/accounts/${account.id}">${account.name}</a></dd>` : null}
  <dt>Model</dt><dd class="mono">${d.model_id}</dd>
  <dt>Source</dt><dd>${d.source}</dd>
  <dt>Key</dt><dd>${d.key_name ?? d.key_id ?? "—"}</dd>
  <dt>Created</dt><dd>${isoText(d.created_at)}</dd>
  ${d.started_at ? html`<dt>Started</dt><dd>${isoText(d.started_at)}</dd>` : null}
  ${d.completed_at ? html`<dt>Finished</dt><dd>${isoText(d.completed_at)}</dd>` : null}
  <dt>Attempts</dt><dd>${d.attempts}</dd>
  ${route ? html`<dt>Route</dt><dd><span class="mono">${route.provider}</span> (route ${route.index + 1})</dd><dt>Upstream cost</dt><dd>${route.cost_usd_micro === null ? "Unknown" : formatMoney(BigInt(route.cost_usd_micro), "USD")}</dd>` : null}
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
