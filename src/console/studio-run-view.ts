/**
 * A studio run's page HTML (studio-run-pages.ts): status, jobs ahead and logs while it is open (the
 * `data-run-*` hooks client/app.js updates from the status stream), then the result or the failure.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import { FINAL_STATUSES } from "../queue/job-row.ts";
import type { RequestDetail } from "../queue/requests.ts";
import { formatMoney } from "./format.ts";
import type { ConsoleKit } from "./kit.ts";
import { isoText, preview, statusBadge } from "./requests-view.ts";

function chargedLine(d: RequestDetail): SafeHtml {
  const p = d.price;
  if (p.charged_micro !== null)
    return html`<dt>Charged</dt><dd><data value="${p.charged_micro}">${formatMoney(p.charged_micro, p.currency)}</data></dd>`;
  return html`<dt>Reserved</dt><dd>${p.reserved_micro === null ? "—" : html`<data value="${p.reserved_micro}">${formatMoney(p.reserved_micro, p.currency)}</data>`} <span class="hint">(charged when it completes, never more)</span></dd>`;
}

function logItems(d: RequestDetail): SafeHtml {
  return html`${d.timeline
    .filter((e) => e.event === "log")
    .map(
      (e) => html`<li><time datetime="${e.at}">${isoText(e.at)}</time> ${e.level ?? "log"} ${e.message}</li>`,
    )}`;
}

/** The run's page body; `ahead`: jobs ahead in the queue (null when not known). */
export function runBody(kit: Pick<ConsoleKit, "origin">, d: RequestDetail, ahead: number | null): SafeHtml {
  const open = !FINAL_STATUSES.includes(d.status);
  const failed = d.status === "FAILED" || d.status === "CANCELLED";
  const textOutput =
    d.status === "COMPLETED" && d.outputs.length === 0 && d.output !== null
      ? html`<h2>Result</h2><pre class="json"><code>${JSON.stringify(d.output, null, 2)}</code></pre>`
      : null;
  return html`<p><a href="/console/studio">← Studio</a></p>
<h1>Studio run <span class="mono">${d.model_id}</span></h1>
<section class="studio-run" aria-label="Progress"${open ? html` data-run-events="/console/studio/runs/${d.id}/events"` : null}>
<dl class="facts">
  <dt>Status</dt><dd data-run-status>${statusBadge(d.status)}</dd>
  ${open ? html`<dt>Jobs ahead</dt><dd data-run-ahead>${ahead === null ? "—" : ahead}</dd>` : null}
  <dt>Submitted</dt><dd>${isoText(d.created_at)}</dd>
  ${d.completed_at ? html`<dt>Finished</dt><dd>${isoText(d.completed_at)}</dd>` : null}
  ${chargedLine(d)}
</dl>
${open ? html`<p class="hint" data-run-note>This page follows the run; reload it if it stops updating.</p>` : null}
<h2>Logs</h2>
<ol class="timeline" data-run-logs aria-live="polite">${logItems(d)}</ol>
</section>
${
  failed
    ? html`<div class="notice error" role="alert"><p>${d.status === "FAILED" ? "The run failed" : "The run was cancelled"}${d.error ? html`: <span class="mono">${d.error.code}</span> ${d.error.message}` : "."}</p>
<p>Nothing was charged: the reserved amount went back to the balance.</p></div>`
    : null
}
${
  d.outputs.length
    ? html`<h2>Result</h2>
<p class="hint">Fresh signed links, valid 24 hours from now.</p>
<div class="outputs">${d.outputs.map((o) => preview(kit, o, d.model_id))}</div>`
    : null
}
${textOutput}
<p><a href="/console/requests/${d.id}">Request details</a> (input, price, timeline)</p>`;
}
