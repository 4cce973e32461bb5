import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { ApiError } from "../http/errors.ts";
import { fingerprint, IdempotencyStore } from "../idempotency/idempotency.ts";
import { chatProviderFor } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import { CHAT_OPENAPI } from "./openapi.ts";
import { type ChatDelta, failChat, fallbackUsage, finishChat, startChat } from "./service.ts";
import { parseChatBody } from "./validate.ts";

const enc = new TextEncoder();

/** POST /v1/chat/completions: OpenAI's chat format, streamed or not, billed from usage. */
export function chatRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Chat"], security: [{ apiKey: [] }] } }).post(
    "/chat/completions",
    async ({ request, body }) => {
      const principal = requirePrincipal(ctx, request);
      const req = parseChatBody(body);
      const model = ctx.catalog.get(req.model);
      if (model?.kind !== "text") {
        throw new ApiError(
          "unknown_model",
          `"${req.model}" is not a text model of the catalog; see GET /v1/models.`,
          { param: "model" },
        );
      }
      const provider = chatProviderFor(ctx, model); // 503 while its circuit is open
      const idemKey = request.headers.get("idempotency-key");
      let idem: { key: string; fp: string } | null = null;
      if (idemKey !== null) {
        IdempotencyStore.validateKey(idemKey);
        idem = { key: idemKey, fp: fingerprint("POST", new URL(request.url).pathname, body) };
        const replay = ctx.idempotency.markRunning(principal.keyId, idem.key, idem.fp);
        if (replay) {
          const sse = replay.body.startsWith("data:");
          return new Response(replay.body, {
            status: replay.status,
            headers: {
              "content-type": sse ? "text/event-stream" : "application/json",
              "idempotent-replayed": "true",
            },
          });
        }
      }
      const settleIdem = (status: number | null, text: string) => {
        if (idem)
          ctx.idempotency.settleRunning(
            principal.keyId,
            idem.key,
            status === null ? null : { status, body: text },
          );
      };
      try {
        const started = await startChat(ctx, principal, model, req);
        const client = new AbortController();
        const signal = AbortSignal.any([
          client.signal,
          request.signal,
          ctx.shutdownSignal,
          AbortSignal.timeout(model.time_limit_seconds * 1000),
        ]);
        const iterator = provider
          .chat({
            model,
            messages: req.messages,
            maxTokens: started.quote.output_tokens,
            passthrough: model.provider === "sandbox" ? {} : req.passthrough,
            sandbox: model.provider === "sandbox" ? req.sandbox : null,
            signal,
          })
          [Symbol.asyncIterator]();
        const id = `chatcmpl-${started.job.id}`;
        const created = Math.floor(Date.now() / 1000);
        let content = "";
        let finish = "stop";
        let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
        const take = (d: ChatDelta) => {
          content += d.content;
          if (d.finishReason) finish = d.finishReason;
          if (d.usage) usage = d.usage;
        };

        // The first piece decides between an error answer (nothing charged) and a reply.
        let first: IteratorResult<ChatDelta>;
        try {
          first = await iterator.next();
        } catch (err) {
          throw failChat(ctx, started, err);
        }

        if (!req.stream) {
          try {
            for (let r = first; !r.done; r = await iterator.next()) take(r.value);
          } catch (err) {
            throw failChat(ctx, started, err);
          }
          const u = usage ?? fallbackUsage(started, content);
          finishChat(ctx, started, { content, finishReason: finish, usage: u });
          const text = JSON.stringify({
            id,
            object: "chat.completion",
            created,
            model: model.id,
            choices: [
              {
                index: 0,
                message: { role: "assistant", content, refusal: null },
                logprobs: null,
                finish_reason: finish,
              },
            ],
            usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens },
            system_fingerprint: null,
          });
          settleIdem(200, text);
          return new Response(text, { headers: { "content-type": "application/json" } });
        }

        // Streaming: each piece is forwarded as it arrives. Usage is always taken from the upstream
        // for billing, and sent to the client only with stream_options.include_usage.
        const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
          `data: ${JSON.stringify({
            id,
            object: "chat.completion.chunk",
            created,
            model: model.id,
            choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
            ...(req.includeUsage ? { usage: null } : {}),
          })}\n\n`;
        let transcript = "";
        let settled = false;
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            const send = (text: string) => {
              transcript += text;
              controller.enqueue(enc.encode(text));
            };
            send(chunk({ role: "assistant", content: "" }, null));
            try {
              for (let r = first; !r.done; r = await iterator.next()) {
                take(r.value);
                if (r.value.content) send(chunk({ content: r.value.content }, null));
              }
            } catch (err) {
              if (client.signal.aborted || request.signal.aborted) return; // cancel() settles
              settled = true;
              const e = failChat(ctx, started, err);
              send(
                `data: ${JSON.stringify({ error: { code: e.code, message: e.message, type: e.type } })}\n\n`,
              );
              send("data: [DONE]\n\n");
              settleIdem(null, "");
              controller.close();
              return;
            }
            const u = usage ?? fallbackUsage(started, content);
            settled = true;
            finishChat(ctx, started, { content, finishReason: finish, usage: u });
            send(chunk({}, finish));
            if (req.includeUsage) {
              send(
                `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens } })}\n\n`,
              );
            }
            send("data: [DONE]\n\n");
            settleIdem(200, transcript);
            controller.close();
          },
          cancel() {
            // The client went away mid-stream: stop the upstream and charge only what was generated.
            client.abort(new Error("client disconnected"));
            if (settled) return;
            settled = true;
            finishChat(ctx, started, {
              content,
              finishReason: "client_disconnected",
              usage: fallbackUsage(started, content),
            });
            settleIdem(null, "");
          },
        });
        return new Response(stream, {
          headers: {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            connection: "keep-alive",
          },
        });
      } catch (err) {
        settleIdem(null, "");
        throw err;
      }
    },
    { detail: CHAT_OPENAPI },
  );
}
