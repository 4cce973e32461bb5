import type { Catalog } from "../catalog/catalog.ts";
import type { Model } from "../catalog/model.ts";
import type { LiveSettings } from "../config/schema.ts";
import { ERROR_CODES } from "../http/errors.ts";
import type { ErrorCode } from "../lib/errors.ts";
import { formatMicro } from "../lib/money.ts";

type OpenApiPaths = Record<string, Record<string, { summary?: string; security?: unknown[] }>>;

/** A meaning for every code (typed by ErrorCode: a new code without one does not compile). */
const MEANINGS: Record<ErrorCode, string> = {
  unknown_model: "model id not in the catalog",
  unpriceable: "the request cannot be priced",
  bad_webhook_url: "the webhook URL is not acceptable (must be public http/https)",
  bad_messages: "the messages of a text call are invalid",
  use_chat_completions: "a text model was sent to /queue or /run; use /chat/completions",
  validation_error: "input failed validation (see details)",
  unknown_file: "a referenced file is unknown, expired or not yours",
  invalid_code:
    "the redeem code is unknown, used, expired or revoked (or already redeemed into this account)",
  currency_mismatch: "the redeem code is for another currency than the account's",
  unauthorized: "key missing, malformed, unknown, revoked, disabled or expired (the message says which)",
  insufficient_balance: "balance too low; top up at the billing URL",
  key_limit_reached: "the key's monthly spend limit is reached",
  forbidden: "bad download signature and no owning key",
  model_not_allowed: "the key's allowed_models does not include this model",
  address_not_allowed: "the key's allowed_cidrs does not include the client address",
  not_found: "no such route, request or file (another account's ids are also 404)",
  method_not_allowed: "the path exists but not with this method (see Allow)",
  idempotency_conflict: "same Idempotency-Key with a different body, or still running",
  request_not_ready: "response read before COMPLETED",
  not_cancellable: "only IN_QUEUE requests can be cancelled",
  conflict: "the change conflicts with the current state",
  expired: "the signed output URL is no longer valid",
  payload_too_large: "body over the size limit",
  range_not_satisfiable: "the Range header does not fit the file",
  unsupported_media_type: "content type missing, not allowed, or not what the bytes are",
  rate_limited: "too many writes per key per minute; see Retry-After",
  too_many_in_flight: "too many open jobs for the key",
  download_cap: "this output was downloaded too many times",
  internal_error: "unexpected; logged on the server",
  submit_failed: "the upstream failed before any output; nothing was charged",
  generation_failed: "the job failed while /run waited; nothing was charged",
  payment_provider_error: "the payment provider failed or timed out; nothing was charged",
  capacity_unavailable: "temporary; retry with backoff after Retry-After",
  insufficient_storage: "the server's disk is too full to accept uploads",
};

function price(m: Model): string {
  if (m.kind === "text") {
    return `in $${formatMicro(m.input_price_usd_micro!)} / out $${formatMicro(m.output_price_usd_micro!)} per 1M tokens`;
  }
  const per = m.unit === "second" ? "s" : m.unit === "image" ? "image" : "MP";
  if (m.resolution_prices_usd_micro) {
    return Object.entries(m.resolution_prices_usd_micro)
      .map(([r, p]) => `${r} $${formatMicro(p)}/${per}`)
      .join(", ");
  }
  return `$${formatMicro(m.price_usd_micro!)}/${per}`;
}

function limit(m: Model): string {
  if (m.kind === "text") return `context ${m.context} tokens`;
  const unit = m.unit === "second" ? "s" : m.unit === "image" ? "images" : "MP";
  const def = m.default_units !== null ? `, default ${m.default_units}` : "";
  return `max ${m.max} ${unit}${def}`;
}

/**
 * The live guide at /v1/llms.txt, rebuilt from the running catalog, limits and route table,
 * so a model or route that does not exist is never described.
 */
export function buildLlmsTxt(
  ctx: { publicUrl: string; catalog: Catalog; live: Pick<LiveSettings, "limits"> },
  paths: OpenApiPaths,
): string {
  const base = `${ctx.publicUrl}/v1`;
  const has = (path: string) => path in paths;
  const out: string[] = [];
  const l = ctx.live.limits;
  out.push(
    "# gengate",
    "",
    "> Prepaid HTTP API for generation models: video, image, avatar, upscale, speech and text. One API key,",
    "> one prepaid balance. Media models run through a job queue; text models through OpenAI-compatible chat.",
    "",
    `Base URL: ${base}`,
    `OpenAPI schema: ${base}/openapi.json · API reference: ${ctx.publicUrl}/docs · Catalog JSON: ${base}/models`,
    "",
    "## Authentication",
    "",
    "Send `Authorization: Key <API_KEY>` on every call except the catalog, this guide, the OpenAPI schema and",
    "signed output downloads. `Authorization: Bearer <API_KEY>` is accepted too (OpenAI SDKs). Keys look like",
    "`gk_...`. A missing, malformed or revoked key is 401 `unauthorized`.",
    "",
    "## Money",
    "",
    "All amounts are integer micro-units as decimal strings: 1 USD = 1,000,000 micro-USD (`*_usd_micro`).",
    "Prices are per unit: second (video, avatar, audio), image, megapixel, or 1M tokens (text, input and",
    "output priced separately; cost = ceil((in x in_price + out x out_price) / 1,000,000)).",
    "When `duration` or `num_images` is omitted, the model's `default_units` apply; send both explicitly.",
    "",
  );

  if (has("/v1/estimate")) {
    out.push(
      "## Estimate",
      "",
      `POST ${base}/estimate with {"model_id": "...", "input": {...}} returns the exact price before running.`,
      'For text models the input is {"input_tokens": N, "output_tokens": N}. 400 unknown_model / unpriceable.',
      "",
    );
  }
  if (has("/v1/queue/{model_id}")) {
    out.push(
      "## Queue flow (media models)",
      "",
      `1. POST ${base}/queue/{model_id} with the model input as JSON -> 202 {request_id, status_url, response_url, cancel_url, quoted_usd_micro}.`,
      "   The estimated price is reserved on submit. Optional `webhook_url` (query or body) gets one POST when the job ends.",
      "2. GET status_url until `status` is COMPLETED (IN_QUEUE -> IN_PROGRESS -> COMPLETED | FAILED; CANCELLED by you).",
      "3. GET response_url: the model output; media fields hold signed URLs valid for 24 hours.",
      `POST ${base}/run/{model_id} submits and waits up to ${l.runWaitSeconds} s: 200 output, 202 still running, 502 generation_failed.`,
      "A failed job charges nothing; a completed one charges the actual amount, never above the estimate.",
      "Idempotency-Key header: the same key and body replays the first answer; another body is 409 idempotency_conflict.",
      "",
    );
  }
  if (has("/v1/account/webhook-secret")) {
    out.push(
      "## Webhooks",
      "",
      "Pass webhook_url (query or body; fal_webhook is an alias) at submit: it must be a public http(s) URL.",
      "When the job ends (COMPLETED, FAILED or CANCELLED) it gets one POST with the full request record, signed per",
      `Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the secret from GET ${base}/account/webhook-secret.`,
      "Non-2xx answers are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; 410 stops. Confirm by reading response_url.",
      "",
    );
  }
  if (has("/v1/queue/{model_id}")) {
    out.push(
      "## fal clients",
      "",
      `@fal-ai/client works when its queue URL is rewritten to ${base}/queue (requestMiddleware). On its routes`,
      "(/queue/{owner}/{alias}/requests/{id}/status, .../status/stream, .../requests/{id}, PUT .../cancel) a FAILED or",
      "CANCELLED job reads as COMPLETED with error and error_type, so the client stops polling.",
      "",
    );
  }
  if (has("/v1/run/{owner}/{alias}/stream")) {
    out.push(
      "## fal stream and value forms",
      "",
      `fal.stream (@fal-ai/client, fal.run rewritten to ${base}/run): POST ${base}/run/{model_id}/stream opens one queue job`,
      "(same hold and Idempotency-Key as /queue) and answers SSE: fal status events, then an `output` event with the output",
      "(done() resolves to it). A failed job sends an `error` event {detail, error_type} and aborts the stream: the client raises.",
      'Inputs also take the forms fal clients send: duration 5, "5" or "5s"; image_size square_hd, square, portrait_4_3,',
      'portrait_16_9, landscape_4_3, landscape_16_9, {"width", "height"} or "WxH" (becomes width/height); output_format',
      "where the model declares it (sandbox: png; wav, or url for speech). Estimates price the normalized value.",
      "",
    );
  }
  if (has("/v1/chat/completions")) {
    out.push(
      "## Chat (text models)",
      "",
      `POST ${base}/chat/completions with OpenAI's chat body ({model, messages, max_tokens? or max_completion_tokens?, stream?}).`,
      "Without either limit, 4096 completion tokens are reserved and the reply is limited to that.",
      "stream=true answers text/event-stream in OpenAI's chunk format, ending with `data: [DONE]`.",
      "",
    );
  }
  if (has("/v1/responses")) {
    out.push(
      "## OpenAI Responses (text models)",
      "",
      `POST ${base}/responses with OpenAI's Responses body ({model, input, instructions?, max_output_tokens?, stream?}):`,
      "input is a string or message items (role user/assistant/system/developer, content a string or input_text/output_text parts).",
      "Billed exactly like chat (max_output_tokens absent: 4096 reserved). Images, files, tools and previous_response_id are 400.",
      "stream=true answers Responses events (event: + data:) from response.created to response.completed with usage; the id is resp_<request id>.",
      "",
    );
  }
  if (has("/v1/messages")) {
    out.push(
      "## Anthropic clients (text models)",
      "",
      `Anthropic's SDKs work with base URL ${ctx.publicUrl} and a gengate key (sent as x-api-key; anthropic-version is ignored).`,
      `POST ${base}/messages ({model, messages, system?, max_tokens (required), stream?}) runs the same billed chat call;`,
      "text blocks only (image, document and tool blocks are 400 bad_messages); the message id is msg_<request_id>.",
      `POST ${base}/messages/count_tokens answers {input_tokens}: the figure a call reserves, free. Errors are in`,
      "Anthropic's shape with gengate's code in error.code; 4xx other than 408 and 429 carry x-should-retry: false.",
      "",
    );
  }
  if (has("/v1/predictions")) {
    out.push(
      "## Replicate clients",
      "",
      `The replicate client works with baseUrl ${base} (auth: the gengate key; Bearer or Token). POST ${base}/models/{owner}/{name}/predictions`,
      "with {input, webhook?, webhook_events_filter?} (or POST /predictions with version: owner/name, owner/name:<version> or the version id)",
      "opens one queue job of the catalog model owner/name: the prediction id is the request id, priced and held as /queue.",
      "Prefer: wait[=n] (1..60, default 60) answers when it ends or after n s (still running: status starting). Statuses: starting (queued),",
      "processing, succeeded, failed, canceled; output: signed links (one URL, or a list when the model outputs a list).",
      "GET /predictions/{id}, POST /predictions/{id}/cancel (queued only; 409 while processing), GET /predictions ({next, previous, results}).",
      "urls.stream is a signed link (no key) of server-sent events: one `output` per file once it ends, then `done` (or `error`).",
      "A webhook gets the prediction once it ends (only `completed` is sent), signed as every webhook. Errors: {title, detail, status, code}.",
      "",
    );
  }
  if (has("/v1/videos")) {
    out.push(
      "## OpenAI videos (video and avatar models)",
      "",
      `OpenAI's SDKs work with base URL ${base}: videos.create (POST ${base}/videos, multipart or JSON) opens one queue job`,
      'and answers the video object at once; its id is the request id. model: a video or avatar model id; seconds ("4", "8" or "8s")',
      '-> duration; size "WxH" -> the model\'s resolution/aspect_ratio (a size it cannot make is 400 listing the ones it can);',
      "input_reference (an image file, a file id or {file_id}) -> image_url. Poll GET /videos/{id} until status is completed or",
      "failed (a cancelled video reads failed, error.code cancelled); GET /videos/{id}/content streams the video (409",
      "request_not_ready before). DELETE /videos/{id} cancels a queued video (hold released) or deletes a finished one's file;",
      "while it runs: 409 not_cancellable. GET /videos lists them (after, limit, order).",
      "",
    );
  }
  if (has("/v1/images/generations")) {
    out.push(
      "## OpenAI images and speech",
      "",
      `POST ${base}/images/generations ({model, prompt, n?, size? "WxH"|"auto", response_format? "url"|"b64_json"}),`,
      `POST ${base}/images/edits (multipart: image or image[] files, mask?) and POST ${base}/audio/speech`,
      "({model, input, voice?, response_format?, speed?}) run one queue job of an image or audio model and answer when",
      "it ends, as OpenAI's API does: {created, data: [{url} | {b64_json}]}, or the audio bytes. The job is held and",
      "charged like /run (the estimate of the mapped input: n -> num_images, size -> width/height, input -> text), and",
      "listed in GET /requests (its id in the x-gengate-request-id header). A size or format the model cannot make is 400",
      "naming those it can; a failed job is 502 generation_failed, free.",
      "",
    );
  }
  if (has("/v1/files")) {
    out.push(
      "## Files",
      "",
      `POST ${base}/files with raw bytes and their Content-Type -> 201 {file_id: "file_..."}.`,
      "Put the file_id in any URL field of a model input (image_url, video_url, audio_url, ...).",
      "",
    );
  }

  out.push("## Endpoints", "", "| Method | Path | Key | What |", "|---|---|---|---|");
  for (const [path, ops] of Object.entries(paths)) {
    if (path.startsWith("/admin")) continue;
    for (const [method, op] of Object.entries(ops)) {
      const auth = op.security && op.security.length > 0 ? "yes" : "no";
      out.push(`| ${method.toUpperCase()} | ${path} | ${auth} | ${op.summary ?? ""} |`);
    }
  }

  out.push("", "## Models", "", "| Model id | Kind | Price | Limits |", "|---|---|---|---|");
  for (const m of ctx.catalog.models) out.push(`| ${m.id} | ${m.kind} | ${price(m)} | ${limit(m)} |`);
  const sandbox = ctx.catalog.models.filter((m) => m.provider === "sandbox" && m.kind !== "text");
  if (sandbox.length > 0) {
    out.push(
      "",
      'Sandbox models accept `"sandbox": {"delay_ms": N, "fail": true, "actual_units": N}` in their input to be slow,',
      "fail, or finish with fewer units, so every path can be tested without an upstream.",
    );
  }

  out.push(
    "",
    "## Errors",
    "",
    'Every error is JSON: {"error": {"code", "message", "type", "param"?, "details"?, "request_id"?}}.',
    "Every response carries `x-request-id`; quote it when asking for help.",
    "",
    "| HTTP | code | meaning |",
    "|---|---|---|",
  );
  for (const [code, [status]] of Object.entries(ERROR_CODES))
    out.push(`| ${status} | ${code} | ${MEANINGS[code as ErrorCode]} |`);

  out.push(
    "",
    "## Limits",
    "",
    `- Writes (POST/PUT/PATCH/DELETE): ${l.writesPerMinute} per key per minute (429 rate_limited, with Retry-After). Reads and status polls never count.`,
    `- Open jobs (IN_QUEUE or IN_PROGRESS): ${l.inFlight} per key (429 too_many_in_flight).`,
    "- Per request: the catalog `max` of the model; text: the model's context.",
    "- Monthly spend: set per key; spent + held + the new estimate above it is 402 key_limit_reached.",
    `- Uploads: up to ${Math.floor(l.uploadMaxBytes / 1048576)} MiB; images, video and audio only.`,
    "- Signed output URLs: valid 24 hours (then 410 expired); 200 full downloads per output (then 429 download_cap).",
    "",
  );
  return out.join("\n");
}
