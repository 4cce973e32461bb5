/**
 * A mock OpenAI-compatible upstream for tests, faithful to the chat protocol: SSE chunks
 * ("data: {json}"), a usage chunk when stream_options.include_usage is set, "data: [DONE]", and
 * OpenAI's error bodies. The upstream model name picks the behaviour:
 *   ok, slow (50 ms per chunk), midstream-error, no-usage, 429, 503, 400, endless (until aborted).
 * The completion limit is read from max_completion_tokens or max_tokens, as OpenAI does. Models of
 * OpenAI's o-series and GPT-5 family (o1, o3-mini, gpt-5-mini, ...) and "refuses-max-tokens" (a model
 * the gateway's name pattern does not know) refuse max_tokens with OpenAI's own 400: openai-node's
 * src/resources/chat/completions/completions.ts documents max_tokens as "not compatible with o-series
 * models", and the API answers code "unsupported_parameter", param "max_tokens".
 * "echo-<status>" (chat and media): that status with OpenAI's error shape, its message holding `echo`
 * (a test's marker: what an upstream says must never reach a client).
 * Media: images are 16x16 PNGs whatever the size asked ("urls": as links; "big-urls": links to a
 * 16x16 PNG padded to 17 MiB after its end; "half": half the count;
 * "jpeg": a 16x12 JPEG; "link-metadata" / "link-localhost": links to 169.254.169.254 and to another
 * loopback origin), speech is a 2 s WAV. As OpenAI's images API does (openai-node
 * src/resources/images.ts): GPT image models (gpt-image-*) always answer b64_json and refuse
 * response_format with a 400; dall-e-2/dall-e-3 answer links unless response_format is b64_json.
 */
export interface MockOpenAI {
  url: string;
  requests: { body: Record<string, unknown>; authorization: string | null }[];
  /** Calls whose client (the gateway) went away before the end. */
  aborted: number;
  /** The text "echo-<status>" models put in their error message. */
  echo: string;
  stop(): void;
}

/**
 * A text model of provider "mock" (configured as `providers: { mock: { type: "openai", base_url:
 * `${mock.url}/v1` } }`) whose upstream model name picks the mock's behaviour: $1 per 1M input
 * tokens, $2 per 1M output tokens, an 8192-token context. `extra` overrides or adds fields.
 */
export function mockTextModel(name: string, extra: Record<string, unknown> = {}) {
  return {
    id: `mock/${name}`,
    kind: "text",
    provider: "mock",
    upstream_model: name,
    input_price_usd_micro: 1_000_000,
    output_price_usd_micro: 2_000_000,
    context: 8192,
    ...extra,
  };
}

const WORDS = [
  "Hello",
  " from",
  " the",
  " mock",
  " upstream",
  ".",
  " It",
  " streams",
  " words",
  " one",
  " by",
  " one",
  ".",
];

export function startMockOpenAI(): MockOpenAI {
  const state: MockOpenAI = { url: "", requests: [], aborted: 0, echo: "", stop: () => server.stop(true) };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/files/img.png") {
        const { encodePng } = await import("../../src/providers/sandbox/media/index.ts");
        return new Response(encodePng(16, 16, 2), { headers: { "content-type": "image/png" } });
      }
      if (path === "/files/big.png") {
        // Bytes after IEND are ignored by readers; the size is what makes a measure go to a thread.
        const { encodePng } = await import("../../src/providers/sandbox/media/index.ts");
        const png = encodePng(16, 16, 2);
        const big = new Uint8Array(17 * 1024 * 1024);
        big.set(png);
        return new Response(big, { headers: { "content-type": "image/png" } });
      }
      if (path === "/files/missing.png") return new Response("gone", { status: 404 });
      // JPEG bytes labelled image/png: the gateway types a fetched output by its bytes.
      if (path === "/files/mislabelled")
        return new Response(JPEG_16X12, { headers: { "content-type": "image/png" } });
      if (path.endsWith("/images/generations") || path.endsWith("/audio/speech"))
        return media(req, path, state);
      const body = (await req.json()) as Record<string, unknown>;
      state.requests.push({ body, authorization: req.headers.get("authorization") });
      const mode = String(body.model);
      const echoed = echoAnswer(mode, state);
      if (echoed) return echoed;
      if (mode === "429" || mode === "503") {
        return Response.json(
          { error: { message: "overloaded", type: "rate_limit" } },
          { status: Number(mode), headers: { "retry-after": "7" } },
        );
      }
      if (mode === "400")
        return Response.json(
          { error: { message: "Invalid 'messages': too long", type: "invalid_request_error" } },
          { status: 400 },
        );
      if ((/^(o\d|gpt-5)/.test(mode) || mode === "refuses-max-tokens") && "max_tokens" in body)
        return Response.json(
          {
            error: {
              message:
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
              type: "invalid_request_error",
              param: "max_tokens",
              code: "unsupported_parameter",
            },
          },
          { status: 400 },
        );
      const max = Number(body.max_completion_tokens ?? body.max_tokens ?? 16);
      const words =
        mode === "endless"
          ? Array.from({ length: 100_000 }, (_, i) => WORDS[i % WORDS.length]!)
          : WORDS.slice(0, max);
      const includeUsage =
        (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
      const base = { id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1, model: mode };
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          const enc = new TextEncoder();
          try {
            c.enqueue(
              enc.encode(
                chunk({
                  ...base,
                  choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
                }),
              ),
            );
            for (let i = 0; i < words.length; i++) {
              if (req.signal.aborted) throw new Error("aborted");
              if (mode === "slow" || mode === "endless") await Bun.sleep(mode === "slow" ? 50 : 20);
              if (mode === "midstream-error" && i === 3) {
                c.enqueue(
                  enc.encode(chunk({ error: { message: "the model crashed", type: "server_error" } })),
                );
                c.close();
                return;
              }
              c.enqueue(
                enc.encode(
                  chunk({
                    ...base,
                    choices: [{ index: 0, delta: { content: words[i] }, finish_reason: null }],
                  }),
                ),
              );
            }
            c.enqueue(
              enc.encode(
                chunk({
                  ...base,
                  choices: [{ index: 0, delta: {}, finish_reason: words.length >= max ? "length" : "stop" }],
                }),
              ),
            );
            if (includeUsage && mode !== "no-usage") {
              c.enqueue(
                enc.encode(
                  chunk({
                    ...base,
                    choices: [],
                    usage: {
                      prompt_tokens: 11,
                      completion_tokens: words.length,
                      total_tokens: 11 + words.length,
                    },
                  }),
                ),
              );
            }
            c.enqueue(enc.encode("data: [DONE]\n\n"));
            c.close();
          } catch {
            state.aborted++;
          }
        },
        cancel() {
          state.aborted++;
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    },
  });
  state.url = `http://127.0.0.1:${server.port}/v1`;
  return state;
}

/** "echo-<status>": the status, with `echo` in OpenAI's error body (message, type and code). */
function echoAnswer(mode: string, state: MockOpenAI): Response | null {
  const m = /^echo-(\d{3})$/.exec(mode);
  if (!m) return null;
  return Response.json(
    { error: { message: `${state.echo}: refused`, type: "invalid_request_error", code: state.echo } },
    { status: Number(m[1]) },
  );
}

/** /images/generations (b64_json PNGs, or URLs with model "urls") and /audio/speech (a WAV). */
async function media(req: Request, path: string, state: MockOpenAI): Promise<Response> {
  const body = (await req.json()) as Record<string, unknown>;
  state.requests.push({ body, authorization: req.headers.get("authorization") });
  const mode = String(body.model);
  const echoed = echoAnswer(mode, state);
  if (echoed) return echoed;
  if (mode === "503") return Response.json({ error: { message: "overloaded" } }, { status: 503 });
  if (mode === "400")
    return Response.json({ error: { message: "prompt rejected by safety system" } }, { status: 400 });
  if (mode === "garbage") return new Response("<html>not json</html>", { status: 200 });
  if (/^gpt-image/.test(mode) && "response_format" in body)
    return Response.json(
      {
        error: {
          message: "Unknown parameter: 'response_format'.",
          type: "invalid_request_error",
          param: "response_format",
          code: "unknown_parameter",
        },
      },
      { status: 400 },
    );
  if (path.endsWith("/audio/speech")) {
    const { encodeSpeechWav } = await import("../../src/providers/sandbox/media/index.ts");
    return new Response(encodeSpeechWav(2, 1), { headers: { "content-type": "audio/wav" } });
  }
  const { encodePng } = await import("../../src/providers/sandbox/media/index.ts");
  // "half": the upstream delivers only half the images asked for (rounded up).
  const n = Math.ceil(Number(body.n ?? 1) / (mode === "half" ? 2 : 1));
  const png = Buffer.from(encodePng(16, 16, 1)).toString("base64");
  const origin = new URL(req.url).origin;
  const link =
    mode === "big-urls"
      ? `${origin}/files/big.png`
      : mode === "urls" || (/^dall-e/.test(mode) && body.response_format !== "b64_json")
        ? `${origin}/files/img.png`
        : mode === "link-metadata"
          ? "http://169.254.169.254/latest/meta-data/iam"
          : mode === "link-mislabelled"
            ? `${origin}/files/mislabelled`
            : mode === "link-localhost"
              ? `http://localhost:${new URL(origin).port}/files/img.png`
              : null;
  const b64 = mode === "jpeg" ? Buffer.from(JPEG_16X12).toString("base64") : png;
  const data = Array.from({ length: n }, () => (link ? { url: link } : { b64_json: b64 }));
  return Response.json({ created: 1, data });
}

/** The smallest JPEG header a reader sizes: SOI, a baseline frame header (16x12, 3 components), EOI. */
const JPEG_16X12 = Uint8Array.of(
  0xff,
  0xd8,
  0xff,
  0xc0,
  0x00,
  0x11,
  0x08,
  0x00,
  0x0c,
  0x00,
  0x10,
  0x03,
  0x01,
  0x22,
  0x00,
  0x02,
  0x11,
  0x01,
  0x03,
  0x11,
  0x01,
  0xff,
  0xd9,
);
