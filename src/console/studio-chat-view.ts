/**
 * The studio chat's HTML (studio-chat-pages.ts): the chat view of a text model on the studio page,
 * its Estimate, and the answer page of the chat form sent without script.
 */
import { httpStatus } from "../http/errors.ts";
import type { ModelDeps } from "../jobs/models.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { type StudioEstimateDeps, studioChatEstimate } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import type { AccountSession } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { estimateBox } from "./studio-estimate.ts";

/** What the chat view reads: the model and the account's estimate (studioChatEstimate). */
export type ChatViewDeps = StudioEstimateDeps & ModelDeps;

/** The Estimate of the chat's next reply (the tokens it would hold), or why there is none yet. */
export async function chatEstimateBox(
  ctx: ChatViewDeps,
  s: AccountSession,
  modelId: string,
  messages: unknown | null,
): Promise<SafeHtml> {
  const base = { form: "studio-chat-form", empty: "type a message" };
  if (messages === null) return await estimateBox(ctx, s, base);
  try {
    const e = await studioChatEstimate(ctx, s.accountId, modelId, { messages });
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

/**
 * The chat view of a text model on the studio page (app.js `data-chat` streams the replies and
 * keeps `messages`, the conversation so far, for the Estimate that htmx refreshes as one types).
 */
export async function chatView(ctx: ChatViewDeps, s: AccountSession, modelId: string): Promise<SafeHtml> {
  return html`<section id="studio-chat" class="studio-chat" aria-labelledby="studio-chat-title" data-chat>
<h2 id="studio-chat-title">Chat</h2>
<ol class="chat-messages" data-chat-messages aria-live="polite"></ol>
<form id="studio-chat-form" class="stack" method="post" action="/console/studio/chat" data-chat-form>
  ${csrfField(s)}
  <input type="hidden" name="model_id" value="${modelId}">
  <input type="hidden" name="messages" value="[]" data-chat-history>
  <label for="studio-chat-message">Message</label>
  <!-- htmx on the textarea, not the form: after app.js handled the form's submit, htmx no longer
       answered the form's own custom trigger (seen in Chromium), while the textarea's still works. -->
  <textarea id="studio-chat-message" name="message" rows="3" required
    hx-post="/console/studio/chat/estimate" hx-trigger="input changed delay:400ms, chat-updated"
    hx-include="closest form" hx-target="#studio-estimate-box" hx-swap="outerHTML"></textarea>
  ${await chatEstimateBox(ctx, s, modelId, null)}
  <div class="button-row"><button type="submit">Send</button></div>
</form>
<p><span id="studio-chat-total-label">Conversation total</span>
  <output id="studio-chat-total" aria-labelledby="studio-chat-total-label" data-chat-total>—</output></p>
<p class="hint">Each reply holds at most its Estimate while it is written, then is charged what its tokens cost, read from the wallet.</p>
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
