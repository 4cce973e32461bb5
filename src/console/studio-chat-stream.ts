/**
 * The studio chat's stream (studio-chat-pages.ts): the API's SSE passed through as it comes, then,
 * once it ends, one `cost` event with the reply's charge and the conversation's total, read from the
 * ledger (the API's stream settles the call before it ends).
 */
import { type ChatCostDeps, conversationCost } from "../studio/chat-cost.ts";
import type { AccountSession } from "./kit.ts";
import { costEventText } from "./studio-chat-view.ts";

/** The `cost` event: this reply's charge and the conversation's total, from the ledger. */
async function costEvent(
  ctx: ChatCostDeps,
  s: AccountSession,
  id: string,
  earlier: string[],
): Promise<string> {
  return costEventText(id, await conversationCost(ctx, s, id, earlier));
}

/** Passes the API's SSE through; when it ends, adds the cost event of the reply it carried. */
export function withCost(
  ctx: ChatCostDeps,
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
