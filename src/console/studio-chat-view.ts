/**
 * The studio chat's HTML (studio-chat-pages.ts): the chat view of a text model on the studio page,
 * its Estimate, and the answer page of the chat form sent without script.
 */

import type { Model } from "../catalog/model.ts";
import { httpStatus } from "../http/errors.ts";
import type { ModelDeps } from "../jobs/models.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { type StudioEstimateDeps, studioChatEstimate } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import type { AccountSession } from "./kit.ts";
import { csrfField } from "./layout.ts";
import {
  type ChatParamsText,
  chatBodyOfForm,
  MAX_SYSTEM_CHARS,
  TEMPERATURE_MAX,
} from "./studio-chat-form.ts";
import { estimateBox, refusalNotice } from "./studio-estimate.ts";

/** What the chat view reads: the model and the account's estimate (studioChatEstimate). */
export type ChatViewDeps = StudioEstimateDeps & ModelDeps;

/** The Estimate of the chat's next reply (the tokens it would hold), or why there is none yet. */
export async function chatEstimateBox(
  ctx: ChatViewDeps,
  s: AccountSession,
  modelId: string,
  body: Record<string, unknown> | null,
): Promise<SafeHtml> {
  const base = { form: "studio-chat-form", empty: "type a message" };
  if (body === null) return await estimateBox(ctx, s, base);
  try {
    const e = await studioChatEstimate(ctx, s.accountId, modelId, body);
    return await estimateBox(ctx, s, {
      ...base,
      estimate: e.estimate,
      detail: `the most this reply can cost: ${e.input_tokens} prompt tokens and up to ${e.output_tokens} reply tokens; it is charged what its tokens cost`,
    });
  } catch (err) {
    if (!(err instanceof DomainError) || httpStatus(err.code) >= 500) throw err;
    return await estimateBox(ctx, s, { ...base, error: err.message });
  }
}

/** A chat form as it was sent, shown again when the message was refused (nothing typed is lost). */
export interface ChatState {
  params: ChatParamsText;
  /** The message being typed. */
  message: string;
  /** The conversation so far (the `messages` field's JSON). */
  messages: string;
  refusal: DomainError;
}

const EMPTY_PARAMS: ChatParamsText = { system: "", temperature: "", max_tokens: "" };

/** Attributes that refresh the Estimate as a field changes (htmx, the whole chat form). */
const ESTIMATE_ON_INPUT = html`hx-post="/console/studio/chat/estimate" hx-trigger="input changed delay:400ms" hx-include="closest form" hx-target="#studio-estimate-box" hx-swap="outerHTML"`;

/** The system prompt and the parameters (temperature, max tokens), bounded as the API bounds them. */
function chatParams(model: Model, p: ChatParamsText, refusal: DomainError | undefined): SafeHtml {
  const err = (name: string) =>
    refusal?.param === name
      ? html` aria-invalid="true" aria-describedby="studio-chat-${name}-hint studio-refusal"`
      : html` aria-describedby="studio-chat-${name}-hint"`;
  return html`<div class="field">
  <label for="studio-chat-system">System prompt</label>
  <span class="hint" id="studio-chat-system-hint">Sent first, before the conversation: how the model should answer. Optional, at most ${MAX_SYSTEM_CHARS} characters.</span>
  <textarea id="studio-chat-system" name="system" rows="2" maxlength="${MAX_SYSTEM_CHARS}"${err("system")} ${ESTIMATE_ON_INPUT}>${p.system}</textarea>
</div>
<fieldset class="field-group chat-params"><legend>Parameters</legend>
  <div class="field">
    <label for="studio-chat-temperature">Temperature</label>
    <span class="hint" id="studio-chat-temperature-hint">0 to ${TEMPERATURE_MAX}; lower is more predictable. Empty: the model's default.</span>
    <input id="studio-chat-temperature" name="temperature" type="number" inputmode="decimal" min="0" max="${TEMPERATURE_MAX}" step="0.1" value="${p.temperature}"${err("temperature")} ${ESTIMATE_ON_INPUT}>
  </div>
  <div class="field">
    <label for="studio-chat-max_tokens">Max tokens</label>
    <span class="hint" id="studio-chat-max_tokens-hint">The longest reply, in tokens: 1 to ${model.context ?? "the model's context"}. Empty: 4096 within the context. The Estimate holds this many.</span>
    <input id="studio-chat-max_tokens" name="max_tokens" type="number" inputmode="numeric" min="1"${model.context !== null ? html` max="${model.context}"` : null} step="1" value="${p.max_tokens}"${err("max_tokens")} ${ESTIMATE_ON_INPUT}>
  </div>
</fieldset>`;
}

/**
 * The chat view of a text model on the studio page, as a playground: the form (system prompt,
 * parameters, message, its Estimate, Send) on the left and the conversation on the right. app.js
 * `data-chat` streams the replies and keeps `messages`, the conversation so far, for the Estimate
 * that htmx refreshes as one types.
 */
export async function chatView(
  ctx: ChatViewDeps,
  s: AccountSession,
  model: Model,
  state?: ChatState,
): Promise<SafeHtml> {
  const p = state?.params ?? EMPTY_PARAMS;
  let body: Record<string, unknown> | null = null;
  if (state && state.message.trim() !== "") {
    try {
      const form = new Map(Object.entries({ ...p, message: state.message, messages: state.messages }));
      body = chatBodyOfForm(form, model.context);
    } catch {
      body = null; // the refusal above the form says why
    }
  }
  return html`<section id="studio-chat" class="studio-chat" aria-labelledby="studio-chat-title" data-chat>
<h2 id="studio-chat-title">Chat</h2>
<div class="playground">
<div class="playground-form">
<form id="studio-chat-form" class="stack studio-form" method="post" action="/console/studio/chat" novalidate data-chat-form>
  ${csrfField(s)}
  ${refusalNotice(state?.refusal, "Not sent", "send again: your message is kept")}
  <input type="hidden" name="model_id" value="${model.id}">
  <input type="hidden" name="messages" value="${state?.messages ?? "[]"}" data-chat-history>
  ${chatParams(model, p, state?.refusal)}
  <label for="studio-chat-message">Message</label>
  <!-- htmx on the fields, not the form: after app.js handled the form's submit, htmx no longer
       answered the form's own custom trigger (seen in Chromium), while a field's still works. -->
  <textarea id="studio-chat-message" name="message" rows="3" required
    hx-post="/console/studio/chat/estimate" hx-trigger="input changed delay:400ms, chat-updated"
    hx-include="closest form" hx-target="#studio-estimate-box" hx-swap="outerHTML">${state?.message ?? ""}</textarea>
  ${await chatEstimateBox(ctx, s, model.id, body)}
  <div class="button-row"><button type="submit">Send</button></div>
</form>
</div>
<section id="studio-result" class="playground-result" aria-labelledby="studio-conversation-title">
<h3 id="studio-conversation-title">Conversation</h3>
<ol class="chat-messages" data-chat-messages aria-live="polite"></ol>
<p><span id="studio-chat-total-label">Conversation total</span>
  <output id="studio-chat-total" aria-labelledby="studio-chat-total-label" data-chat-total>—</output></p>
<p class="hint">Each reply holds at most its Estimate while it is written, then is charged what its tokens cost, read from the wallet.</p>
</section>
</div>
</section>`;
}

/** The chat form's answer without script: the message, the reply and its cost (the ledger's). */
export function replyBody(
  modelId: string,
  id: string,
  asked: { content?: unknown } | null,
  completion: { choices: { message: { content: string } }[] },
  own: { micro: bigint; currency: string },
): SafeHtml {
  return html`<h1>Studio chat</h1>
<p class="lead">${modelId}</p>
<ol class="chat-messages">
  <li class="chat-user"><strong>You</strong> <p class="chat-text">${typeof asked?.content === "string" ? asked.content : ""}</p></li>
  <li class="chat-assistant"><strong>Reply</strong> <p class="chat-text">${completion.choices[0]?.message.content ?? ""}</p>
    <p class="hint chat-cost">Cost: ${formatMoney(own.micro, own.currency)}</p></li>
</ol>
<p><a href="/console/requests/${id}">The request</a> · <a href="/console/studio?model=${encodeURIComponent(modelId)}">Back to the studio</a></p>`;
}

/** The SSE `cost` event after a streamed reply (client/app.js shows both amounts). */
export function costEventText(
  id: string,
  cost: { currency: string; chargedMicro: bigint; totalMicro: bigint },
): string {
  return `event: cost\ndata: ${JSON.stringify({
    request_id: id,
    currency: cost.currency,
    charged_micro: cost.chargedMicro.toString(),
    charged: formatMoney(cost.chargedMicro, cost.currency),
    total_micro: cost.totalMicro.toString(),
    total: formatMoney(cost.totalMicro, cost.currency),
  })}\n\n`;
}
