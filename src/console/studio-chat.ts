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
import { errorResponse } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { requestDetail } from "../queue/requests.ts";
import type { AppContext } from "../server/context.ts";
import { studioChat } from "../studio/service.ts";
import { formatMoney } from "./format.ts";
import { type AccountSession, type ConsoleKit, field, requireAccount } from "./kit.ts";
import { csrfField } from "./layout.ts";

/** At most this much JSON is read from `messages` (the API's own limits apply after). */
const MAX_MESSAGES_CHARS = 256 * 1024;
/** At most this many earlier replies count in a conversation's total. */
const MAX_CONVERSATION = 500;

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function messagesOf(text: string, single: string): unknown {
  if (text.trim() === "") {
    if (single.trim() === "")
      throw new DomainError("validation_error", "Write a message.", { param: "messages" });
    return [{ role: "user", content: single }];
  }
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
function chargedFor(ctx: AppContext, s: AccountSession, id: string): { micro: bigint; currency: string } {
  const job = ctx.jobs.getOwned(id, s.accountId);
  if (!job || job.person_id !== s.personId || job.kind !== "text") return { micro: 0n, currency: "" };
  const p = requestDetail(ctx, s.accountId, id).price;
  return { micro: p.charged_micro ?? 0n, currency: p.currency };
}

/** The `cost` event: this reply's charge and the conversation's total, from the ledger. */
export function costEvent(ctx: AppContext, s: AccountSession, id: string, earlier: string[]): string {
  const own = chargedFor(ctx, s, id);
  const currency = own.currency || ctx.accounts.getAccount(s.accountId)!.currency;
  let total = own.micro;
  for (const e of earlier) if (e !== id) total += chargedFor(ctx, s, e).micro;
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
      flush(controller) {
        // The API's stream settles the call before it ends, so the ledger has the charge now.
        if (id) controller.enqueue(enc.encode(costEvent(ctx, s, id, earlier)));
      },
    }),
  );
}

/** The chat view of a text model on the studio page (app.js `data-chat` streams the replies). */
export function chatView(s: AccountSession, modelId: string): SafeHtml {
  return html`<section id="studio-chat" class="studio-chat" aria-labelledby="studio-chat-title" data-chat>
<h2 id="studio-chat-title">Chat</h2>
<ol class="chat-messages" data-chat-messages aria-live="polite"></ol>
<form class="stack" method="post" action="/console/studio/chat" data-chat-form>
  ${csrfField(s)}
  <input type="hidden" name="model_id" value="${modelId}">
  <label for="studio-chat-message">Message</label>
  <textarea id="studio-chat-message" name="message" rows="3" required></textarea>
  <div class="button-row"><button type="submit">Send</button></div>
</form>
<p><span id="studio-chat-total-label">Conversation total</span>
  <output id="studio-chat-total" aria-labelledby="studio-chat-total-label" data-chat-total>—</output></p>
<p class="hint">Each reply is charged what its tokens cost, read from the wallet once it has finished.</p>
</section>`;
}

export function studioChatRoutes(kit: ConsoleKit) {
  return new Elysia().post(
    "/console/studio/chat",
    kit.action(async (c) => {
      const s = requireAccount(c.session);
      try {
        const modelId = field(c.form, "model_id").trim();
        if (!modelId) throw new DomainError("validation_error", "Choose a model.", { param: "model_id" });
        const messages = messagesOf(field(c.form, "messages"), field(c.form, "message"));
        const earlier = conversationOf(field(c.form, "conversation"));
        const answer = await studioChat(
          kit.ctx,
          s,
          modelId,
          { messages, stream: true },
          AbortSignal.any([c.request.signal, kit.ctx.shutdownSignal]),
        );
        if (answer.kind !== "stream") throw new Error(`studio chat answered ${answer.kind}, not a stream`);
        return new Response(withCost(kit.ctx, s, answer.body, earlier), { headers: SSE_HEADERS });
      } catch (err) {
        // The script shows the message: the API's JSON error (validation, 402, 429...).
        if (err instanceof DomainError) return errorResponse(err);
        throw err;
      }
    }),
  );
}
