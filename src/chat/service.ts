import type { Model, Route } from "../catalog/model.ts";
import type { IdempotencyClaim, StoredResponse } from "../idempotency/idempotency.ts";
import { type ModelDeps, resolveTextModel } from "../jobs/models.ts";
import { type Opener, type OpenJobDeps, openCall } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import { errorFields, log } from "../lib/log.ts";
import { countPromptTokens, countTokens, estimatePromptTokens } from "../lib/tokens.ts";
import { textCost } from "../pricing/cost.ts";
import type { TextQuote } from "../pricing/quote.ts";
import { chargeForTextUsage, reserveText } from "../pricing/text.ts";
import type { ChatDelta } from "../providers/chat.ts";
import { chatProviderFor } from "../providers/registry.ts";
import { logProviderFailure, ProviderError } from "../providers/types.ts";
import type { JobRow } from "../queue/job-row.ts";
import type { AppContext } from "../server/context.ts";
import type { ChatRequest } from "./validate.ts";
import { chatFormat, type ReplyFormatOf, type Usage } from "./wire.ts";

/** What settling or failing a started call uses: the group commit, the jobs, the outputs' retention. */
export type ChatSettleDeps = Pick<AppContext, "submits" | "jobs" | "live">;

/**
 * What a chat call uses, declared (not the whole AppContext): opening (`openCall`), the model
 * (`resolveTextModel`), the Idempotency-Key's claim, the provider and its circuit, the stop signal.
 */
export type ChatDeps = OpenJobDeps &
  ModelDeps &
  ChatSettleDeps &
  Pick<AppContext, "idempotency" | "circuits" | "shutdownSignal">;

export interface StartedChat {
  /** The call's job; its `provider` and `route` follow a fallback (the route the reply comes from). */
  job: JobRow;
  /** The route the call runs on: its costs price the call's upstream cost at settlement. */
  route: Route | undefined;
  quote: TextQuote;
  promptEstimate: number;
  /**
   * The reservation's WAL sync, overlapping the upstream call: settled before any answer (before a
   * stream's first byte; a whole reply waits for its settlement's later sync, which covers it).
   */
  durable: Promise<void>;
}

/**
 * What a chat call holds while its reply is written: the prompt's tokens (counted exactly for the
 * sandbox, conservatively estimated for an upstream) plus max_tokens (4096 when missing) at the
 * model's prices. The one computation startChat reserves and the studio's Estimate shows.
 */
export function chatQuote(model: Model, req: ChatRequest): { quote: TextQuote; promptEstimate: number } {
  const promptEstimate = promptTokens(model, req.messages);
  const quote = reserveText(
    model,
    promptEstimate,
    req.maxTokens,
    req.paramNames ?? { input: "messages", output: req.maxTokensParam },
  );
  return { quote, promptEstimate };
}

/**
 * The prompt's tokens as a chat call reserves them: counted exactly for the sandbox, estimated
 * conservatively for an upstream (src/lib/tokens.ts). Anthropic's count_tokens answers this figure.
 */
export function promptTokens(model: Model, messages: ChatRequest["messages"]): number {
  return model.provider === "sandbox" ? countPromptTokens(messages) : estimatePromptTokens(messages);
}

/**
 * Prices and reserves a chat call before the upstream is asked anything: a conservative prompt
 * estimate plus max_tokens (4096 when missing) over the model's context is 400 validation_error;
 * otherwise the price is held and the call is recorded as a text job (IN_PROGRESS) in one
 * transaction, so it shows in the wallet, spend and GET /v1/requests like any other call. Resolved
 * at that transaction's COMMIT: the upstream call overlaps its WAL sync, and nothing is answered
 * before `durable` has resolved (docs/decisions.md "Durable commits").
 */
export async function startChat(
  ctx: OpenJobDeps,
  who: Opener,
  model: Model,
  req: ChatRequest,
): Promise<StartedChat> {
  const { quote, promptEstimate } = chatQuote(model, req);
  const opened = await openCall(ctx, {
    who,
    model,
    input: JSON.stringify({ messages: req.messages, max_tokens: quote.output_tokens }),
    quote,
    webhookUrl: null,
  });
  return {
    job: opened.value,
    route: model.routes[model.route ?? 0],
    quote,
    promptEstimate,
    durable: opened.durable,
  };
}

export interface ChatOutcome {
  content: string;
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/**
 * Settles a chat call: the upstream's usage (or, if it sent none, our counts: the prompt estimate and
 * the reply's tokens) priced per 1M tokens and capped at the reservation. COMPLETED, charge <= hold.
 */
export async function finishChat(
  ctx: ChatSettleDeps,
  started: StartedChat,
  outcome: ChatOutcome,
): Promise<void> {
  const charge = chargeForTextUsage(
    started.quote,
    outcome.usage.prompt_tokens,
    outcome.usage.completion_tokens,
  );
  // Group-committed with the reservations and settlements of the same event-loop turn (one commit
  // and one WAL sync for all of them); answered after that commit's sync.
  const completed = await ctx.submits.batched(
    async (sql) =>
      await ctx.jobs
        .in(sql)
        .complete(
          started.job.id,
          { text: outcome.content, finish_reason: outcome.finishReason, usage: outcome.usage },
          [],
          charge,
          String(outcome.usage.prompt_tokens + outcome.usage.completion_tokens),
          ctx.live.files.retentionMs,
          Date.now(),
          textCost(started.route, outcome.usage.prompt_tokens, outcome.usage.completion_tokens),
        ),
  );
  // Only the deadline sweep can close a chat job first (it released the hold): the reply is sent,
  // uncharged, and the operator sees why.
  if (!completed)
    log("warn", "chat reply finished after its job was closed; not charged", {
      request_id: started.job.id,
    });
}

/** A failure before the call completed: FAILED, the hold released, nothing charged. */
export async function failChat(
  ctx: Pick<AppContext, "jobs">,
  started: StartedChat,
  err: unknown,
): Promise<DomainError> {
  // The client sees our message only; what the upstream said goes to the operator's log.
  if (err instanceof ProviderError) logProviderFailure(err, started.job.id, started.job.provider);
  else log("error", "chat provider error", { request_id: started.job.id, ...errorFields(err) });
  const message = err instanceof ProviderError ? err.message : "The upstream call failed.";
  await ctx.jobs.fail(
    started.job.id,
    err instanceof ProviderError && err.kind === "capacity" ? "capacity_unavailable" : "submit_failed",
    message,
    Date.now(),
  );
  if (err instanceof ProviderError && err.kind === "capacity") {
    return new DomainError("capacity_unavailable", `${message} Nothing was charged; retry later.`, {
      retryAfterSeconds: (err.retryAfterMs ?? 2000) / 1000,
      extra: { request_id: started.job.id },
    });
  }
  return new DomainError("submit_failed", `${message} Nothing was charged.`, {
    extra: { request_id: started.job.id },
  });
}

/** Usage to bill when the upstream sent none: our prompt estimate and the reply's counted tokens. */
export function fallbackUsage(started: StartedChat, content: string) {
  return { prompt_tokens: started.promptEstimate, completion_tokens: countTokens(content) };
}

/** What a chat call answers: a replay of its Idempotency-Key, a chat.completion, or an SSE stream. */
export type ChatAnswer =
  | { kind: "replay"; stored: StoredResponse }
  | { kind: "json"; body: string }
  | { kind: "stream"; body: ReadableStream<Uint8Array> };

const enc = new TextEncoder();

/**
 * One chat completion, from the parsed request to its settled answer. The model (a text model,
 * its circuit closed), the Idempotency-Key's claim (held for the whole call: a duplicate
 * meanwhile is 409), the reservation (startChat), then the upstream: its first piece decides
 * between an error answer (FAILED, nothing charged) and a reply. A reply is settled from the
 * upstream's usage before it is answered (non-streamed) or before [DONE] (streamed); a client
 * that goes away mid-stream stops the upstream and is charged only what was generated. `formatOf`
 * writes the reply in the door's format (chat completions unless another door passes its own).
 */
export async function completeChat(
  ctx: ChatDeps,
  who: Opener,
  req: ChatRequest,
  claim: IdempotencyClaim | null,
  clientSignal: AbortSignal,
  formatOf: ReplyFormatOf = chatFormat(req.includeUsage),
): Promise<ChatAnswer> {
  const model = resolveTextModel(ctx, req.model, who);
  // An Idempotency-Key is scoped to a key: a keyless opener (the studio) claims nothing.
  const running =
    who.keyId === null
      ? await ctx.idempotency.claimRunning("", null)
      : await ctx.idempotency.claimRunning(who.keyId, claim);
  if (running.replay) return { kind: "replay", stored: running.replay };
  const settleIdem = running.settle;
  // Aborted when the call ends, however it ends: that releases the signals derived from it (the
  // time limit's and the provider's own timeout; see endCall).
  let client: AbortController | null = null;
  try {
    let started: StartedChat | null = null;
    // A fallback before the first byte moves the call's record to the route that answers.
    const provider = chatProviderFor(ctx, model, async (route) => {
      const r = model.routes[route]!;
      if (!started) return;
      started.route = r;
      started.job = { ...started.job, provider: r.provider, route: BigInt(route) };
      await ctx.jobs.setRoute(started.job.id, r.provider, route);
    });
    started = await startChat(ctx, who, model, req);
    client = new AbortController();
    const callClient = client;
    const signal = AbortSignal.any([
      callClient.signal,
      clientSignal,
      ctx.shutdownSignal,
      AbortSignal.timeout(model.time_limit_seconds * 1000),
    ]);
    const iterator = provider
      .chat({
        model,
        messages: req.messages,
        maxTokens: started.quote.output_tokens,
        maxTokensParam: req.maxTokensParam,
        passthrough: model.provider === "sandbox" ? {} : req.passthrough,
        sandbox: model.provider === "sandbox" ? req.sandbox : null,
        signal,
      })
      [Symbol.asyncIterator]();
    const format = formatOf({
      jobId: started.job.id,
      created: Math.floor(Date.now() / 1000),
      model: model.id,
      promptTokens: started.promptEstimate,
    });
    let content = "";
    let finish = "stop";
    let usage: Usage | null = null;
    const take = (d: ChatDelta) => {
      content += d.content;
      if (d.finishReason) finish = d.finishReason;
      if (d.usage) usage = d.usage;
    };

    // The reservation was committed before the upstream was called; its WAL sync runs meanwhile.
    // A streamed reply sends nothing (not its first byte) before that sync; a whole reply is
    // answered after its settlement's sync, which covers the reservation's frames too (the WAL is
    // synced as a prefix: src/db/wal-sync.ts), so the settlement does not wait for the first one.
    // Its outcome is still observed, so a failed sync is never answered as a success.
    const reservationSynced = started.durable.then(
      () => null,
      (err: unknown) => ({ err }),
    );

    // The first piece decides between an error answer (nothing charged) and a reply.
    let first: IteratorResult<ChatDelta>;
    try {
      first = await iterator.next();
      if (req.stream) await started.durable;
    } catch (err) {
      throw await failChat(ctx, started, err);
    }

    if (!req.stream) {
      try {
        for (let r = first; !r.done; r = await iterator.next()) take(r.value);
      } catch (err) {
        throw await failChat(ctx, started, err);
      }
      const u = usage ?? fallbackUsage(started, content);
      await finishChat(ctx, started, { content, finishReason: finish, usage: u });
      const unsynced = await reservationSynced;
      if (unsynced) throw unsynced.err;
      const body = format.whole(content, finish, u);
      await settleIdem({ status: 200, body });
      endCall(callClient);
      return { kind: "json", body };
    }

    // Streaming: each piece is forwarded as it arrives. Usage is always taken from the upstream
    // for billing, and sent to the client only with stream_options.include_usage.
    let transcript = "";
    let settled = false;
    const streamReply = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
      const send = (text: string) => {
        transcript += text;
        controller.enqueue(enc.encode(text));
      };
      send(format.opening());
      try {
        for (let r = first; !r.done; r = await iterator.next()) {
          take(r.value);
          if (r.value.content) send(format.delta(r.value.content));
        }
      } catch (err) {
        if (callClient.signal.aborted || clientSignal.aborted) return; // cancel() settles
        settled = true;
        send(format.failure(await failChat(ctx, started, err), content));
        await settleIdem(null);
        controller.close();
        return;
      }
      const u = usage ?? fallbackUsage(started, content);
      settled = true;
      await finishChat(ctx, started, { content, finishReason: finish, usage: u });
      send(format.closing(content, finish, u));
      await settleIdem({ status: 200, body: transcript });
      controller.close();
    };
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        try {
          await streamReply(controller);
        } finally {
          endCall(callClient); // however the stream ended (a failed settlement too)
        }
      },
      async cancel() {
        // The client went away mid-stream: stop the upstream and charge only what was generated.
        callClient.abort(new Error("client disconnected"));
        if (settled) return;
        settled = true;
        await finishChat(ctx, started, {
          content,
          finishReason: "client_disconnected",
          usage: fallbackUsage(started, content),
        });
        await settleIdem(null);
      },
    });
    return { kind: "stream", body };
  } catch (err) {
    if (client) endCall(client);
    await settleIdem(null);
    throw err;
  }
}

/**
 * Ends a chat call's signal once the call is over. A timeout signal (`AbortSignal.timeout`) that
 * another signal depends on (`AbortSignal.any`) stays alive until it fires: in Bun 1.4.5, 20,000
 * `AbortSignal.any([signal, AbortSignal.timeout(600_000)])` kept 20,000 signals and 35 MB for ten
 * minutes, so every call held about 3.5 KB (the time limit's signal here and the provider's) for
 * the model's time limit: at 2,500 calls/s, gigabytes. Aborting the call's own source releases
 * them (docs/performance.md). Nothing reads the signal after the call.
 */
function endCall(client: AbortController): void {
  if (!client.signal.aborted) client.abort(new Error("call ended"));
}
