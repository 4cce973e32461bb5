import type { ChatCall, ChatDelta, ChatProvider } from "../chat.ts";
import { ProviderError } from "../types.ts";
import { fetchUpstream } from "../upstream-http.ts";

export interface OpenAIProviderConfig {
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
}

/**
 * Chat through any server speaking OpenAI's API (vLLM, llama.cpp server, Ollama, OpenRouter,
 * OpenAI). The gateway always streams from the upstream and asks for usage, so it can bill exactly,
 * stop a reply at the reserved limit, and abort the upstream call when its own client goes away.
 * 429/503 are capacity errors (the caller answers 503 with Retry-After, nothing charged).
 */
export class OpenAIChatProvider implements ChatProvider {
  constructor(
    readonly name: string,
    private readonly cfg: OpenAIProviderConfig,
  ) {}

  async *chat(call: ChatCall): AsyncIterable<ChatDelta> {
    const body = {
      ...call.passthrough,
      model: call.model.upstream_model ?? call.model.id,
      messages: call.messages,
      max_tokens: call.maxTokens,
      stream: true,
      stream_options: { include_usage: true },
    };
    let res: Response;
    try {
      res = await fetchUpstream(
        `${this.cfg.baseUrl}/chat/completions`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            ...(this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.any([call.signal, AbortSignal.timeout(this.cfg.timeoutMs)]),
        },
        "idle-close",
      );
    } catch (err) {
      if (call.signal.aborted) throw err;
      throw new ProviderError(
        "capacity",
        `The upstream could not be reached (${(err as Error).name}).`,
        2000,
      );
    }
    if (res.status === 429 || res.status === 503) {
      const retry = Number(res.headers.get("retry-after"));
      await res.body?.cancel();
      throw new ProviderError(
        "capacity",
        `The upstream is busy (${res.status}).`,
        Number.isFinite(retry) && retry > 0 ? retry * 1000 : 2000,
      );
    }
    if (!res.ok) {
      const text = (await res.text()).slice(0, 2000);
      let message = `The upstream answered ${res.status}.`;
      try {
        const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
        if (typeof m === "string") message = `The upstream refused the call: ${m.slice(0, 300)}`;
      } catch {
        // not JSON: keep the status line only (never echo arbitrary upstream bodies)
      }
      throw new ProviderError(res.status >= 500 ? "failed" : "input", message);
    }
    if (!res.body) throw new ProviderError("failed", "The upstream sent no body.");
    yield* parseSse(res.body);
  }
}

/** OpenAI's chunk stream: "data: {json}" events, ending with "data: [DONE]". */
async function* parseSse(body: ReadableStream<Uint8Array>): AsyncIterable<ChatDelta> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let nl = buffer.indexOf("\n");
    while (nl !== -1) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      let chunk: {
        error?: { message?: string };
        choices?: { delta?: { content?: unknown }; finish_reason?: ChatDelta["finishReason"] }[];
        usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
      };
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ProviderError("failed", "The upstream sent a malformed stream chunk.");
      }
      if (chunk.error)
        throw new ProviderError(
          "failed",
          `The upstream failed mid-stream: ${String(chunk.error.message ?? "error").slice(0, 300)}`,
        );
      const choice = chunk.choices?.[0];
      const content = typeof choice?.delta?.content === "string" ? choice.delta.content : "";
      const u = chunk.usage;
      const usage =
        u && Number.isSafeInteger(u.prompt_tokens) && Number.isSafeInteger(u.completion_tokens)
          ? { prompt_tokens: u.prompt_tokens as number, completion_tokens: u.completion_tokens as number }
          : undefined;
      if (content || choice?.finish_reason || usage)
        yield { content, finishReason: choice?.finish_reason ?? null, usage };
    }
  }
  throw new ProviderError("failed", "The upstream stream ended without [DONE].");
}
