/**
 * The studio's chat (issue 17): `POST /console/studio/chat` (a signed-in person, Origin and CSRF by
 * kit.action; form fields `model_id`, `messages` as a JSON array of chat messages, and
 * `conversation`, the request ids of the conversation's earlier replies) calls `studioChat` with
 * stream: true (the API's own chat: source STUDIO, the person's in-flight cap, settled before
 * [DONE]) and passes its SSE through. When the reply's stream ends, one more event follows:
 *
 *   event: cost
 *   data: {"request_id", "currency", "charged_micro", "charged", "total_micro", "total"}
 *
 * read from the ledger (the request's settled hold; `total`: the same for this reply and the
 * conversation's earlier ones of this person), never computed in the browser. client/app.js's
 * `data-chat` shows the reply as it streams, then these figures. An error before the reply is the
 * API's JSON error body with its status.
 */
import { Elysia } from "elysia";
import { errorResponse, httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { requestDetail } from "../queue/requests.ts";
import type { AppContext } from "../server/context.ts";
import { studioChat, studioChatEstimate } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import {
  type AccountSession,
  type ConsoleKit,
  type Form,
  field,
  htmlResponse,
  type PageContext,
  requireAccount,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { estimateBox } from "./studio-estimate.ts";

/** At most this much JSON is read from `messages` (the API's own limits apply after). */
const MAX_MESSAGES_CHARS = 256 * 1024;
/** At most this many earlier replies count in a conversation's total. */
const MAX_CONVERSATION = 500;

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** The `messages` field: a JSON array of chat messages ("" is none). */
function historyOf(text: string): unknown {
  if (text.trim() === "") return [];
  if (text.length > MAX_MESSAGES_CHARS)
    throw new DomainError("validation_error", "The conversation is too long.", { param: "messages" });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError("validation_error", "messages must be a JSON array of chat messages.", {
      param: "messages",
    });
  }
}

/**
 * The conversation a form sends: `messages` (app.js sends the whole conversation there) followed by
 * `message` when there is one (the page's own form without script, or the message being typed).
 * Null when there is nothing to send.
 */
function conversationOfForm(form: Form): unknown | null {
  const history = historyOf(field(form, "messages"));
  const message = field(form, "message");
  if (message.trim() === "") return Array.isArray(history) && history.length === 0 ? null : history;
  // Not an array: passed on as it is, for the chat's own validation to refuse.
  return Array.isArray(history) ? [...history, { role: "user", content: message }] : history;
}

/** The ids of the conversation's earlier replies (malformed ones are ignored). */
function conversationOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split(",")
        .map((x) => x.trim())
        .filter((x) => UUID_PATTERN.test(x)),
    ),
  ].slice(0, MAX_CONVERSATION);
}

/** What the ledger charged for a studio chat reply of this person (0 for anyone else's). */
async function chargedFor(
  ctx: AppContext,
  s: AccountSession,
  id: string,
): Promise<{ micro: bigint; currency: string }> {
  const job = await ctx.jobs.getOwned(id, s.accountId);
  if (!job || job.person_id !== s.personId || job.kind !== "text") return { micro: 0n, currency: "" };
  const p = (await requestDetail(ctx, s.accountId, id)).price;
  return { micro: p.charged_micro ?? 0n, currency: p.currency };
}

/** The `cost` event: this reply's charge and the conversation's total, from the ledger. */
export async function costEvent(
  ctx: AppContext,
  s: AccountSession,
  id: string,
  earlier: string[],
): Promise<string> {
  const own = await chargedFor(ctx, s, id);
  const currency = own.currency || (await ctx.accounts.getAccount(s.accountId))!.currency;
  let total = own.micro;
  for (const e of earlier) if (e !== id) total += (await chargedFor(ctx, s, e)).micro;
  return `event: cost\ndata: ${JSON.stringify({
    request_id: id,
    currency,
    charged_micro: own.micro.toString(),
    charged: formatMoney(own.micro, currency),
    total_micro: total.toString(),
    total: formatMoney(total, currency),
  })}\n\n`;
}

/** Passes the API's SSE through; when it ends, adds the cost event of the reply it carried. */
function withCost(
  ctx: AppContext,
  s: AccountSession,
  body: ReadableStream<Uint8Array>,
  earlier: string[],
): ReadableStream<Uint8Array> {
  const dec = new TextDecoder();
  const enc = new TextEncoder();
  let head = "";
  let id: string | null = null;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (id === null && head.length < 4096) {
          head += dec.decode(chunk, { stream: true });
          id = /"id":"chatcmpl-([0-9a-f-]{36})"/.exec(head)?.[1] ?? null;
        }
        controller.enqueue(chunk);
      },
      async flush(controller) {
        // The API's stream settles the call before it ends, so the ledger has the charge now.
        if (id) controller.enqueue(enc.encode(await costEvent(ctx, s, id, earlier)));
      },
    }),
  );
}

/** The Estimate of the chat's next reply (the tokens it would hold), or why there is none yet. */
export async function chatEstimateBox(
  ctx: AppContext,
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
export async function chatView(ctx: AppContext, s: AccountSession, modelId: string): Promise<SafeHtml> {
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

export function studioChatPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/studio/chat/estimate",
      kit.action(async (c) => {
        const s = requireAccount(c.session);
        const modelId = field(c.form, "model_id").trim();
        let messages: unknown | null;
        try {
          // Only what is being typed is estimated: the conversation alone has been answered already.
          messages = field(c.form, "message").trim() === "" ? null : conversationOfForm(c.form);
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          return htmlResponse(
            await estimateBox(kit.ctx, s, { form: "studio-chat-form", error: err.message }),
          );
        }
        return htmlResponse(await chatEstimateBox(kit.ctx, s, modelId, messages));
      }),
    )
    .post(
      "/console/studio/chat",
      kit.action(async (c) => {
        const s = requireAccount(c.session);
        // app.js asks for the stream; the page's form without script gets a page with the reply.
        const streamed = (c.request.headers.get("accept") ?? "").includes("text/event-stream");
        try {
          const modelId = field(c.form, "model_id").trim();
          if (!modelId) throw new DomainError("validation_error", "Choose a model.", { param: "model_id" });
          const messages = conversationOfForm(c.form);
          if (messages === null)
            throw new DomainError("validation_error", "Write a message.", { param: "message" });
          const earlier = conversationOf(field(c.form, "conversation"));
          const answer = await studioChat(
            kit.ctx,
            s,
            modelId,
            { messages, stream: streamed },
            AbortSignal.any([c.request.signal, kit.ctx.shutdownSignal]),
          );
          if (!streamed) {
            if (answer.kind !== "json") throw new Error(`studio chat answered ${answer.kind}, not JSON`);
            return await replyPage(kit.ctx, c, s, modelId, messages, answer.body);
          }
          if (answer.kind !== "stream") throw new Error(`studio chat answered ${answer.kind}, not a stream`);
          return new Response(withCost(kit.ctx, s, answer.body, earlier), { headers: SSE_HEADERS });
        } catch (err) {
          // The script shows the message: the API's JSON error (validation, 402, 429...). Without
          // script the console's error page says it.
          if (streamed && err instanceof DomainError) return errorResponse(err);
          throw err;
        }
      }),
    );
}

/**
 * The answer to the chat form sent without script: the message, the reply and its cost (the
 * ledger's), with the way back to the studio.
 */
async function replyPage(
  ctx: AppContext,
  c: PageContext,
  s: AccountSession,
  modelId: string,
  messages: unknown,
  body: string,
): Promise<SafeHtml> {
  const completion = JSON.parse(body) as { id: string; choices: { message: { content: string } }[] };
  const id = completion.id.replace(/^chatcmpl-/, "");
  const own = await chargedFor(ctx, s, id);
  const asked = Array.isArray(messages) ? (messages[messages.length - 1] as { content?: unknown }) : null;
  return c.layout({
    title: "Studio chat",
    active: "studio",
    body: html`<h1>Studio chat</h1>
<p class="lead">${modelId}</p>
<ol class="chat-messages">
  <li class="chat-user"><strong>You</strong> <p class="chat-text">${typeof asked?.content === "string" ? asked.content : ""}</p></li>
  <li class="chat-assistant"><strong>Reply</strong> <p class="chat-text">${completion.choices[0]?.message.content ?? ""}</p>
    <p class="hint chat-cost">Cost: ${formatMoney(own.micro, own.currency)}</p></li>
</ol>
<p><a href="/console/requests/${id}">The request</a> · <a href="/console/studio?model=${encodeURIComponent(modelId)}">Back to the studio</a></p>`,
  });
}
