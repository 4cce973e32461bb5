import { countPromptTokens, textOf, tokenize } from "../../lib/tokens.ts";
import type { ChatCall, ChatDelta, ChatProvider } from "../chat.ts";
import { ProviderError } from "../types.ts";

/**
 * The sandbox chat model: a deterministic answer built from the last user message, streamed one
 * token at a time (sandbox.delay_ms between tokens), cut at max_tokens (finish_reason "length"),
 * with exact usage from its own tokenizer. sandbox.fail makes it fail before any output.
 */
export class SandboxChatProvider implements ChatProvider {
  readonly name = "sandbox";

  async *chat(call: ChatCall): AsyncIterable<ChatDelta> {
    if (call.sandbox?.fail)
      throw new ProviderError("failed", "The sandbox was asked to fail this call (sandbox.fail = true).");
    const lastUser = [...call.messages].reverse().find((m) => m.role === "user");
    const said = textOf(lastUser?.content).replace(/\s+/g, " ").trim().slice(0, 200);
    const reply = `You said: "${said}". This is the gengate sandbox chat model: it answers deterministically, counts real tokens and streams one token at a time.`;
    const tokens = tokenize(reply);
    const out = tokens.slice(0, call.maxTokens);
    const delay = call.sandbox?.delay_ms ?? 0;
    for (const t of out) {
      if (call.signal.aborted) throw call.signal.reason;
      if (delay > 0) await Bun.sleep(delay);
      yield { content: t };
    }
    yield {
      content: "",
      finishReason: out.length < tokens.length ? "length" : "stop",
      usage: { prompt_tokens: countPromptTokens(call.messages), completion_tokens: out.length },
    };
  }
}
