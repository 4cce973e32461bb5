/**
 * A studio run's page HTML (studio-run-pages.ts): the run's input with `Edit and run again` beside
 * its status, jobs ahead and logs while it is open (the `data-run-*` hooks client/app.js updates from
 * the status stream), then the result or the failure.
 */
import type { Model } from "../catalog/model.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { FINAL_STATUSES } from "../queue/job-row.ts";
import type { RequestDetail } from "../queue/requests.ts";
import { inputEntries } from "../studio/form.ts";
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

/** The run's input as the form labels it (the left of the playground), with `Edit and run again`. */
function inputSection(d: RequestDetail, model: Model | null, final: boolean): SafeHtml {
  const input = d.input && typeof d.input === "object" && !Array.isArray(d.input) ? d.input : {};
  const entries = inputEntries(model, input as Record<string, unknown>);
  return html`<section class="playground-form run-input" aria-labelledby="run-input-title">
<h2 id="run-input-title">Input</h2>
${
  entries.length
    ? html`<dl class="facts">${entries.map((e) => html`<dt>${e.label}</dt><dd class="wrap-anywhere">${e.text}</dd>`)}</dl>`
    : html`<p class="hint">No fields: the model's defaults.</p>`
}
${
  final && model
    ? html`<p><a class="button" href="/console/studio?from=${d.id}">Edit and run again</a></p>
<p class="hint">Opens the form with this run's input filled in.</p>`
    : null
}
<p><a href="/console/requests/${d.id}">Request details</a> (input, price, timeline)</p>
</section>`;
}

/**
 * The run's page body, a playground like the studio's: the run's input on the left, its progress
 * and then its result on the right. `model`: the run's model if the catalog still has it;
 * `ahead`: jobs ahead in the queue (null when not known).
 */
export function runBody(
  kit: Pick<ConsoleKit, "origin">,
  d: RequestDetail,
  model: Model | null,
  ahead: number | null,
): SafeHtml {
  const open = !FINAL_STATUSES.includes(d.status);
  const failed = d.status === "FAILED" || d.status === "CANCELLED";
  const textOutput =
    d.status === "COMPLETED" && d.outputs.length === 0 && d.output !== null
      ? html`<h2>Result</h2><pre class="json"><code>${JSON.stringify(d.output, null, 2)}</code></pre>`
      : null;
  return html`<p><a href="/console/studio${model ? html`?model=${encodeURIComponent(model.id)}` : null}">← Studio</a></p>
<h1>Studio run <span class="mono">${d.model_id}</span></h1>
<div class="playground">
${inputSection(d, model, !open)}
<div id="studio-result" class="playground-result">
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
</div>
</div>`;
}
