import type { ChatCall, ChatDelta, ChatProvider } from "../chat.ts";
import { ProviderError } from "../types.ts";
import { fetchUpstream, NOT_SENT, upstreamDetail } from "../upstream-client.ts";

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
    const model = call.model.upstream_model ?? call.model.id;
    let param = tokenLimitParam(model, call.maxTokensParam);
    let res = await this.send(call, model, param);
    let text: string | null = null;
    if (res.status === 400 && param === "max_tokens") {
      // An upstream model the pattern does not know that refuses max_tokens: asked once more with
      // max_completion_tokens (a 400 ran nothing upstream, so nothing is run twice).
      text = (await res.text()).slice(0, 2000);
      if (refusesMaxTokens(text)) {
        param = "max_completion_tokens";
        res = await this.send(call, model, param);
        text = null;
      }
    }
    if (res.status === 429 || res.status === 503) {
      const retry = Number(res.headers.get("retry-after"));
      await res.body?.cancel();
      throw new ProviderError("capacity", "The upstream is busy.", {
        retryAfterMs: Number.isFinite(retry) && retry > 0 ? retry * 1000 : 2000,
        status: res.status,
        notAccepted: true, // refused before any reply: a model's next route may take it
      });
    }
    if (!res.ok) {
      text ??= (await res.text()).slice(0, 2000);
      // Never the upstream's words or status in the message: they are the log's (`detail`).
      const failed = res.status >= 500;
      throw new ProviderError(
        failed ? "failed" : "input",
        failed ? "The upstream failed the call." : "The upstream refused the call.",
        { status: res.status, detail: upstreamDetail(text), secret: this.cfg.apiKey, notAccepted: failed },
      );
    }
    if (!res.body) throw new ProviderError("failed", "The upstream sent no body.");
    yield* parseSse(res.body);
  }

  /** One streamed call, its completion limit sent under `param`; a transport failure is capacity. */
  private async send(call: ChatCall, model: string, param: TokenLimitParam): Promise<Response> {
    const body = {
      ...call.passthrough,
      model,
      messages: call.messages,
      [param]: call.maxTokens,
      stream: true,
      stream_options: { include_usage: true },
    };
    try {
      return await fetchUpstream(
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
      throw new ProviderError("capacity", "The upstream could not be reached.", {
        retryAfterMs: 2000,
        detail: (err as Error).name,
        notAccepted: NOT_SENT.has((err as { code?: string }).code ?? ""),
      });
    }
  }
}

type TokenLimitParam = ChatCall["maxTokensParam"];

/**
 * Upstream models whose chat API refuses `max_tokens` and takes only `max_completion_tokens`:
 * OpenAI's o-series (o1, o3, o4-mini, ...) and GPT-5 family, also behind a router's vendor prefix
 * ("openai/o3-mini"). openai-node/src/resources/chat/completions/completions.ts: `max_tokens` "is now
 * deprecated in favor of `max_completion_tokens`, and is not compatible with o-series models".
 */
const COMPLETION_TOKENS_ONLY = /(^|\/)(o\d|gpt-5)/i;

/**
 * The name the reserved limit goes upstream under: `max_completion_tokens` for the models above,
 * otherwise the name the client used (`max_tokens` when it sent none: the one every
 * OpenAI-compatible server reads, including older vLLM, llama.cpp and Ollama releases).
 */
export function tokenLimitParam(upstreamModel: string, clientParam: TokenLimitParam): TokenLimitParam {
  return COMPLETION_TOKENS_ONLY.test(upstreamModel) ? "max_completion_tokens" : clientParam;
}

function upstreamError(text: string): { message?: unknown; code?: unknown; param?: unknown } | null {
  try {
    return (
      (JSON.parse(text) as { error?: { message?: unknown; code?: unknown; param?: unknown } }).error ?? null
    );
  } catch {
    return null;
  }
}

/**
 * OpenAI's 400 for max_tokens on a model that refuses it: {"error": {"message": "Unsupported parameter:
 * 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type":
 * "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}.
 */
function refusesMaxTokens(text: string): boolean {
  const e = upstreamError(text);
  if (!e) return false;
  return (
    (e.code === "unsupported_parameter" && e.param === "max_tokens") ||
    (typeof e.message === "string" && /'max_tokens'.*max_completion_tokens/.test(e.message))
  );
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
        throw new ProviderError("failed", "The upstream failed mid-stream.", {
          detail: String(chunk.error.message ?? "error"),
        });
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
