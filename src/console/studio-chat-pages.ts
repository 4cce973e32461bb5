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
 * API's JSON error body with its status; without script, the studio page again with everything typed
 * kept and the reason above the form. The form's `system` prompt goes first in the messages, its
 * `temperature` and `max_tokens` with the call (studio-chat-form.ts bounds them as the API does).
 */
import { Elysia } from "elysia";
import { errorHeaders, errorResponse, httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { type ChatCostDeps, chargedFor } from "../studio/chat-cost.ts";
import { studioChat } from "../studio/service.ts";
import {
  type AccountSession,
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  requireAccount,
} from "./kit.ts";
import { chatBodyOfForm, chatParamsText, conversationOf } from "./studio-chat-form.ts";
import { withCost } from "./studio-chat-stream.ts";
import { type ChatState, chatEstimateBox, replyBody } from "./studio-chat-view.ts";
import { estimateBox } from "./studio-estimate.ts";
import { codeSection, studioPage } from "./studio-view.ts";

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** The context of the posted text model (bounds max_tokens), null when unknown or unbounded. */
function contextOf(kit: ConsoleKit, modelId: string): number | null {
  return kit.ctx.catalog.get(modelId)?.context ?? null;
}

async function estimateChat(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const modelId = field(c.form, "model_id").trim();
  const model = kit.ctx.catalog.get(modelId);
  let body: Record<string, unknown> | null;
  try {
    // What the chat would send: the system prompt, the conversation, the typed message, parameters.
    body = chatBodyOfForm(c.form, model?.context ?? null);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return htmlResponse(await estimateBox(kit.ctx, s, { form: "studio-chat-form", error: err.message }));
  }
  // Only what is being typed is estimated: the conversation alone has been answered already. The
  // code section follows out of band, the call as the chat would make it.
  const typed = field(c.form, "message").trim() !== "";
  const box = await chatEstimateBox(kit.ctx, s, modelId, typed ? body : null);
  return htmlResponse(
    html`${box}${model?.kind === "text" ? codeSection(kit, model, body ?? {}, true) : null}`,
  );
}

async function sendChat(c: ActionContext, kit: ConsoleKit): Promise<SafeHtml | Response> {
  const s = requireAccount(c.session);
  // app.js asks for the stream; the page's form without script gets a page with the reply.
  const streamed = (c.request.headers.get("accept") ?? "").includes("text/event-stream");
  const modelId = field(c.form, "model_id").trim();
  try {
    if (!modelId) throw new DomainError("validation_error", "Choose a model.", { param: "model_id" });
    const body = chatBodyOfForm(c.form, contextOf(kit, modelId));
    if (body === null) throw new DomainError("validation_error", "Write a message.", { param: "message" });
    const earlier = conversationOf(field(c.form, "conversation"));
    const answer = await studioChat(
      kit.ctx,
      s,
      modelId,
      { ...body, stream: streamed },
      AbortSignal.any([c.request.signal, kit.ctx.shutdownSignal]),
    );
    if (!streamed) {
      if (answer.kind !== "json") throw new Error(`studio chat answered ${answer.kind}, not JSON`);
      return await replyPage(kit.ctx, c, s, modelId, body.messages, answer.body);
    }
    if (answer.kind !== "stream") throw new Error(`studio chat answered ${answer.kind}, not a stream`);
    return new Response(withCost(kit.ctx, s, answer.body, earlier), { headers: SSE_HEADERS });
  } catch (err) {
    if (!(err instanceof DomainError) || httpStatus(err.code) >= 500) throw err;
    // The script shows the message: the API's JSON error (validation, 402, 429...).
    if (streamed) return errorResponse(err);
    // Without script: the studio again, everything typed kept and the reason above the form.
    const model = kit.ctx.catalog.get(modelId);
    if (model?.kind !== "text") throw err;
    const chat: ChatState = {
      params: chatParamsText(c.form),
      message: field(c.form, "message"),
      messages: field(c.form, "messages") || "[]",
      refusal: err,
    };
    return htmlResponse(
      await studioPage(kit, c, s, model, { chat }),
      httpStatus(err.code),
      errorHeaders(err),
    );
  }
}

/**
 * The answer to the chat form sent without script: the message, the reply and its cost (the
 * ledger's), with the way back to the studio.
 */
async function replyPage(
  ctx: ChatCostDeps,
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
    body: replyBody(modelId, id, asked, completion, own),
  });
}

export function studioChatPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      "/console/studio/chat/estimate",
      kit.action((c) => estimateChat(c, kit)),
    )
    .post(
      "/console/studio/chat",
      kit.action((c) => sendChat(c, kit)),
    );
}
