/**
 * The studio page's HTML (studio-pages.ts, and studio-run-pages.ts for a Run refused with its errors):
 * the model picker with prices, a media model's form with its Estimate, the chat view of a text model,
 * the "Code" section and the run history.
 */
import type { Model } from "../catalog/model.ts";
import { KINDS } from "../catalog/model.ts";
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { AccountEstimate } from "../pricing/account-estimate.ts";
import type { RequestDetail } from "../queue/requests.ts";
import type { AppContext } from "../server/context.ts";
import { type FieldErrors, fieldOfParam, renderStudioFields } from "../studio/form.ts";
import { type StudioEstimateDeps, type StudioHistoryDeps, studioEstimate } from "../studio/service.ts";
import { studioSnippets } from "../studio/snippets.ts";
import { formatMoney, UNIT_LABEL } from "./format.ts";
import type { AccountSession, ConsoleKit, ConsoleKitDeps, KitFor, PageContext } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { preview } from "./requests-view.ts";
import { type ChatState, type ChatViewDeps, chatView } from "./studio-chat-view.ts";
import { estimateBox, refusalNotice } from "./studio-estimate.ts";
import { studioHistory } from "./studio-history.ts";

/** What `POST /v1/estimate` answers, as the studio shows it (one function: src/pricing/account-estimate.ts). */
export type StudioEstimate = AccountEstimate;

const KIND_LABEL: Record<string, string> = {
  image: "Image",
  video: "Video",
  avatar: "Avatar",
  upscale: "Upscale",
  audio: "Audio",
  text: "Text (chat)",
};

/** "0.01 USD per image, max 4" / "0.5 USD per 1M input tokens, 1.5 USD per 1M output tokens". */
export function priceLabel(m: Model): string {
  if (m.kind === "text") {
    return `${formatMoney(m.input_price_usd_micro ?? 0, "USD")} per 1M input tokens, ${formatMoney(m.output_price_usd_micro ?? 0, "USD")} per 1M output tokens`;
  }
  const unit = UNIT_LABEL[m.unit] ?? m.unit;
  const prices = m.resolution_prices_usd_micro
    ? Object.values(m.resolution_prices_usd_micro)
    : [m.price_usd_micro ?? 0];
  const lo = Math.min(...prices);
  const hi = Math.max(...prices);
  const price = lo === hi ? formatMoney(lo, "USD") : `${formatMoney(lo, "USD")} to ${formatMoney(hi, "USD")}`;
  return `${price} per ${unit}${m.max !== null ? `, max ${m.max}` : ""}`;
}

function modelPicker(ctx: Pick<AppContext, "catalog">, current: Model | null): SafeHtml {
  const groups = KINDS.map((kind) => ({
    kind,
    models: ctx.catalog.models.filter((m) => m.kind === kind),
  })).filter((g) => g.models.length > 0);
  return html`<form class="studio-pick" method="get" action="/console/studio">
  <label for="studio-model">Model</label>
  <div class="copy-row">
    <select id="studio-model" name="model" data-autosubmit>
      ${groups.map(
        (g) => html`<optgroup label="${KIND_LABEL[g.kind] ?? g.kind}">
        ${g.models.map(
          (m) =>
            html`<option value="${m.id}"${m.id === current?.id ? html` selected` : null}>${m.id} (${priceLabel(m)})</option>`,
        )}
      </optgroup>`,
      )}
    </select>
    <button type="submit" class="secondary">Choose</button>
  </div>
</form>`;
}

export function codeSection(
  kit: KitFor,
  model: Model,
  input: Record<string, unknown>,
  oob = false,
): SafeHtml {
  const snip = studioSnippets(model, input, kit.ctx.publicUrl);
  const block = (
    id: string,
    title: string,
    text: string,
  ) => html`<details class="code-block"${id === "curl" ? html` open` : null}>
  <summary>${title}</summary>
  <div class="copy-row"><button type="button" class="secondary" data-copy="code-${id}" hidden>Copy</button></div>
  <pre tabindex="0" aria-label="${title} code"><code id="code-${id}">${text}</code></pre>
</details>`;
  return html`<section id="studio-code" aria-labelledby="studio-code-title"${oob ? html` hx-swap-oob="true"` : null}>
<h2 id="studio-code-title">Code</h2>
<p class="hint">The same call from your own code, with one of your <a href="/console/keys">API keys</a> in place of the placeholder.</p>
${block("curl", "curl", snip.curl)}
${block("javascript", model.kind === "text" ? "JavaScript (openai)" : "JavaScript (@fal-ai/client)", snip.javascript)}
${block("python", model.kind === "text" ? "Python (openai)" : "Python (fal-client)", snip.python)}
${snip.more.map((m) => block(m.id, m.title, m.text))}
</section>`;
}

export interface StudioState {
  /** The typed input to show (what was submitted). */
  values?: Record<string, unknown>;
  /** Field texts that could not be read, kept as typed. */
  raw?: Record<string, string>;
  errors?: FieldErrors;
  /** Why the run was refused (402, a rejected field...): shown above the form, next to its field too. */
  refusal?: DomainError;
  /** The run being edited (`Edit and run again`): its result stays in view beside the form. */
  from?: RequestDetail;
  /** A text model's chat form as it was sent (a refused message comes back with it). */
  chat?: ChatState;
}

/**
 * The right-hand column of the playground: the result of the run being edited, or where a run's
 * progress and result will show (the run's page puts them in this place).
 */
function resultPanel(kit: Pick<ConsoleKit, "origin">, from: RequestDetail | undefined): SafeHtml {
  const body = from
    ? html`<p class="hint">The run you are editing (<a href="/console/studio/runs/${from.id}">${from.status.toLowerCase()}</a>); run again to see the new result.</p>
${from.outputs.length ? html`<div class="outputs">${from.outputs.map((o) => preview(kit, o, from.model_id))}</div>` : null}`
    : html`<p class="hint">Run the model: its progress shows here while it runs, then the result in place (images, video, audio) with download links.</p>`;
  return html`<section id="studio-result" class="playground-result" aria-labelledby="studio-result-title">
<h2 id="studio-result-title">Result</h2>
${body}
</section>`;
}

export /** The estimate of a form's current values, or the reason there is none. */
async function estimateOf(
  kit: ConsoleKit<ConsoleKitDeps & StudioEstimateDeps>,
  s: AccountSession,
  model: Model,
  input: Record<string, unknown>,
) {
  try {
    return { estimate: await studioEstimate(kit.ctx, s.accountId, model.id, input), error: null };
  } catch (err) {
    if (!(err instanceof DomainError) || httpStatus(err.code) >= 500) throw err;
    const where = fieldOfParam(model, err.param);
    return { estimate: null, error: err.message, field: where };
  }
}

/** The estimate box's state when a field could not be read: its first error instead of a price. */
export function unreadEstimate(errors: FieldErrors | undefined): { estimate: null; error: string } | null {
  const first = Object.entries(errors ?? {})[0];
  return first ? { estimate: null, error: `${first[0] || "input"}: ${first[1]}` } : null;
}

/** A media model's form: its fields, the Estimate, Run. */
async function mediaForm(
  kit: ConsoleKit<ConsoleKitDeps & StudioEstimateDeps>,
  s: AccountSession,
  model: Model,
  state: StudioState,
): Promise<SafeHtml> {
  // A field that could not be read (e.g. "abc" in a number) means the form has no price: the reason
  // shows in the box, as the htmx partial does, not the price of the other fields.
  const est = unreadEstimate(state.errors) ?? (await estimateOf(kit, s, model, state.values ?? {}));
  const errors: FieldErrors = { ...state.errors };
  const field = "field" in est && typeof est.field === "string" ? est.field : "";
  if (est.error && field && !errors[field]) errors[field] = est.error;
  const refused = state.refusal ? fieldOfParam(model, state.refusal.param) : "";
  if (refused && !errors[refused]) errors[refused] = state.refusal!.message;
  // novalidate: the browser's own check (max="4") would stop htmx's request and the Update estimate
  // post, leaving the last price on screen; the server's check answers the reason instead.
  // multipart: without the script, a URL field's chosen file goes with the form (studioFormUploads).
  return html`<form id="studio-form" class="stack studio-form" method="post" action="/console/studio/run" enctype="multipart/form-data" novalidate
  hx-post="/console/studio/estimate" hx-trigger="input changed delay:400ms, change" hx-target="#studio-estimate-box" hx-swap="outerHTML">
  ${csrfField(s)}
  ${refusalNotice(state.refusal, "Not run", "run again: your input is kept")}
  <input type="hidden" name="model_id" value="${model.id}">
  ${renderStudioFields(model, { values: state.values ?? {}, raw: state.raw, errors })}
  ${await estimateBox(kit.ctx, s, est)}
  <div class="button-row">
    <button type="submit">Run</button>
    <button type="submit" class="secondary" formaction="/console/studio/estimate">Update estimate</button>
  </div>
</form>`;
}

/** What the whole studio page reads: the model picker, the Estimate, the chat view, the history. */
type StudioPageDeps = ConsoleKitDeps & ChatViewDeps & StudioHistoryDeps;

/**
 * The whole studio page for `model` with `state` (what a Run that did not pass validation shows
 * again, with its errors: K's POST /console/studio/run answers this with 400).
 */
export async function studioPage(
  kit: ConsoleKit<StudioPageDeps>,
  c: PageContext,
  s: AccountSession,
  model: Model | null,
  state: StudioState = {},
): Promise<SafeHtml> {
  if (!model) {
    return c.layout({
      title: "Studio",
      active: "studio",
      body: html`<h1>Studio</h1><p class="notice">The catalog has no models yet.</p>`,
    });
  }
  const values = state.values ?? {};
  return c.layout({
    title: "Studio",
    active: "studio",
    body: html`<h1>Studio</h1>
<p class="lead">Run any model of the catalog on this account's balance. Runs are labelled STUDIO in the
<a href="/console/wallet">wallet</a> and the <a href="/console/requests">requests</a>.</p>
${modelPicker(kit.ctx, model)}
${model.description ? html`<p class="hint">${model.description}</p>` : null}
${
  model.kind === "text"
    ? await chatView(kit.ctx, s, model, state.chat)
    : html`<div class="playground">
<div class="playground-form">${await mediaForm(kit, s, model, state)}</div>
${resultPanel(kit, state.from)}
</div>`
}
${codeSection(kit, model, values)}
${await studioHistory(kit, s, c.url.searchParams.get("runs_before"), model.id)}`,
  });
}
