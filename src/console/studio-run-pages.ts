/**
 * Studio runs (issue 17): `POST /console/studio/run` opens a run of a media model for the signed-in
 * person on the account's balance (src/studio/service.ts `studioRun`: the API's one path, source
 * STUDIO, no key), then 303 to the run's page. `GET /console/studio/runs/<id>` shows the run: status,
 * queue position and logs while it is open (kept live by the status stream
 * `GET /console/studio/runs/<id>/events`, the API's own SSE events, followed by client/app.js's
 * `data-run-events`), then the result in place: images, video and audio players with fresh signed
 * links, download links; a failure shows the error and that nothing was charged. Every lookup is
 * scoped to the session's account: another account's run is 404.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { FINAL_STATUSES } from "../queue/job-row.ts";
import { type RequestDetail, requestDetail } from "../queue/requests.ts";
import { statusStream } from "../queue/status-stream.ts";
import { parseStudioForm, readStudioForm } from "../studio/form.ts";
import { studioRun, studioRunOf } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
} from "./kit.ts";
import { isoText, preview, statusBadge } from "./requests-view.ts";
import { studioPage } from "./studio-view.ts";

/** At most this much JSON is read from the `input` field (the API's own limits apply after). */
const MAX_INPUT_CHARS = 256 * 1024;

/**
 * The run form's input: the model's fields as P's parseStudioForm returns them once it lands;
 * until then (and for scripts) a JSON object in the text field `input` (empty: no fields).
 */
function inputOf(c: ActionContext): unknown {
  const text = field(c.form, "input").trim();
  if (text === "") return {};
  if (text.length > MAX_INPUT_CHARS)
    throw new DomainError("validation_error", "The input is too long.", { param: "input" });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError("validation_error", "The input must be a JSON object of the model's fields.", {
      param: "input",
    });
  }
}

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

async function runPage(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const job = await studioRunOf(kit.ctx, s.accountId, c.params.id ?? "");
  const d = await requestDetail(kit.ctx, s.accountId, job.id);
  const open = !FINAL_STATUSES.includes(d.status);
  const ahead = kit.ctx.jobs.queuePosition(job);
  const failed = d.status === "FAILED" || d.status === "CANCELLED";
  const textOutput =
    d.status === "COMPLETED" && d.outputs.length === 0 && d.output !== null
      ? html`<h2>Result</h2><pre class="json"><code>${JSON.stringify(d.output, null, 2)}</code></pre>`
      : null;
  const body = html`<p><a href="/console/studio">← Studio</a></p>
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
  return c.layout({ title: "Studio run", active: "studio", body });
}

export function studioRunPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/studio/run",
      kit.action(async (c) => {
        const s = requireAccount(c.session);
        const modelId = field(c.form, "model_id").trim();
        if (!modelId) throw new DomainError("validation_error", "Choose a model.", { param: "model_id" });
        let input: unknown;
        if (field(c.form, "input").trim() !== "") {
          // A JSON object of the model's fields (scripts, and the studio's own tests).
          input = inputOf(c);
        } else {
          // The studio page's form: its fields read and checked by the API's own schema; errors go
          // back next to their fields (400), with what was typed kept.
          const model = kit.ctx.catalog.get(modelId);
          if (!model)
            throw new DomainError(
              "unknown_model",
              `Model "${modelId.slice(0, 200)}" is not in the catalog.`,
              {
                param: "model_id",
              },
            );
          const read = readStudioForm(model, c.form);
          const parsed = await parseStudioForm(model, c.form);
          if (!parsed.ok)
            return htmlResponse(
              await studioPage(kit, c, s, model, {
                values: parsed.input,
                raw: read.raw,
                errors: parsed.errors,
              }),
              400,
            );
          input = parsed.input;
        }
        const job = await studioRun(kit.ctx, s, modelId, input);
        return redirect(`/console/studio/runs/${job.id}`);
      }),
    )
    .get(
      "/console/studio/runs/:id",
      kit.page(async (c) => await runPage(c, kit)),
    )
    .get(
      "/console/studio/runs/:id/events",
      kit.page(async (c) => {
        const s = requireAccount(c.session);
        const job = await studioRunOf(kit.ctx, s.accountId, c.params.id ?? "");
        return statusStream(
          kit.ctx,
          job.id,
          true,
          AbortSignal.any([c.request.signal, kit.ctx.shutdownSignal]),
        );
      }),
    );
}
