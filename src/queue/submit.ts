import type { Principal } from "../accounts/accounts.ts";
import type { Model } from "../catalog/model.ts";
import { validateModelInput } from "../catalog/validate-input.ts";
import { ownFileUrlsToIds, resolveFileRefs, uploadedImageSize } from "../files/references.ts";
import { ApiError } from "../http/errors.ts";
import { priceMediaInput } from "../pricing/media.ts";
import { serializeQuote } from "../pricing/quote.ts";
import { circuitFor } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import type { JobRow } from "./jobs.ts";

export interface SubmitInput {
  principal: Principal;
  modelId: string;
  body: unknown;
  /** webhook_url from the query (or its fal alias fal_webhook). */
  queryWebhook: string | null;
  source: "API" | "STUDIO";
  idempotency: { key: string; fingerprint: string } | null;
}

export interface SubmitResult {
  job: JobRow;
  /** True when an Idempotency-Key replayed an earlier submit. */
  replayed: boolean;
  replayBody?: string;
}

/** Resolves the model for a queue/run submit: unknown 400, text models go to chat completions. */
export function queueModel(ctx: AppContext, modelId: string): Model {
  const model = ctx.catalog.get(modelId);
  if (!model)
    throw new ApiError("unknown_model", `Model "${modelId}" is not in the catalog; see GET /v1/models.`, {
      param: "model_id",
    });
  if (model.kind === "text") {
    throw new ApiError(
      "use_chat_completions",
      `${modelId} is a text model: call POST /v1/chat/completions.`,
      { param: "model_id" },
    );
  }
  return model;
}

/**
 * A queue submit: validate the input against the model's schema, price it, check the key's
 * in-flight cap, reserve the price and enqueue, all in one transaction (with the idempotency
 * record when a key was given), committed together with concurrent submits (group commit) before
 * the answer is sent. The async part (the webhook URL's DNS check) runs before the transaction.
 */
export async function submitJob(ctx: AppContext, s: SubmitInput): Promise<SubmitResult> {
  const model = queueModel(ctx, s.modelId);
  // An unhealthy upstream: 503 before anything is validated deeper or reserved.
  if (model.provider !== "sandbox") circuitFor(ctx.circuits, model.provider).check();
  const body = s.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("validation_error", "The request body must be a JSON object: the model input.", {
      param: "body",
    });
  }
  // Links to this server's own uploads (as fal.storage.upload returns them) count as their file ids.
  const { webhook_url: bodyWebhook, ...input } = ownFileUrlsToIds(body, ctx.publicUrl) as Record<
    string,
    unknown
  >;
  if (bodyWebhook !== undefined && typeof bodyWebhook !== "string") {
    throw new ApiError("bad_webhook_url", "webhook_url must be a string URL.", { param: "webhook_url" });
  }
  const webhookRaw = (bodyWebhook as string | undefined) ?? s.queryWebhook;
  validateModelInput(model, input);
  const files = resolveFileRefs(ctx.files, s.principal.accountId, input);
  // Per-megapixel upscales are priced on an uploaded image's measured size.
  const quote = priceMediaInput(model, input, { imageSize: uploadedImageSize(files) });
  const webhookUrl = webhookRaw ? (await ctx.checkWebhookUrl(webhookRaw)).toString() : null;

  const limits = ctx.live.limits;
  const maxInFlight = s.principal.maxInFlight ?? limits.inFlight;
  const now = Date.now();
  const id = Bun.randomUUIDv7();

  const outcome = await ctx.submits.run((): SubmitResult => {
    if (s.idempotency) {
      const replay = ctx.idempotency.lookup(s.principal.keyId, s.idempotency.key, s.idempotency.fingerprint);
      if (replay) {
        const prior = JSON.parse(replay.body) as { request_id: string };
        return { job: ctx.jobs.get(prior.request_id)!, replayed: true, replayBody: replay.body };
      }
    }
    if (ctx.jobs.openForKey(s.principal.keyId) >= maxInFlight) {
      throw new ApiError(
        "too_many_in_flight",
        `This key already has ${maxInFlight} open jobs; wait for one to finish.`,
        {
          headers: { "retry-after": "1" },
        },
      );
    }
    const hold = ctx.ledger.reserve({
      accountId: s.principal.accountId,
      keyId: s.principal.keyId,
      modelId: model.id,
      requestId: id,
      source: s.source,
      quotedUsdMicro: quote.amount_usd_micro,
    });
    const job = ctx.jobs.insert({
      id,
      accountId: s.principal.accountId,
      keyId: s.principal.keyId,
      modelId: model.id,
      kind: model.kind,
      source: s.source,
      provider: model.provider,
      input: JSON.stringify(input),
      quote: serializeQuote(quote),
      holdId: hold.id,
      webhookUrl,
      deadlineAt: now + model.time_limit_seconds * 1000,
      createdAt: now,
    });
    if (s.idempotency) {
      const view = ctx.views.queued(job);
      ctx.idempotency.store(s.principal.keyId, s.idempotency.key, s.idempotency.fingerprint, {
        status: 202,
        body: JSON.stringify(view),
      });
    }
    return { job, replayed: false };
  });
  if (!outcome.replayed) {
    ctx.jobs.markQueued(outcome.job);
    ctx.events.newWork(model.provider);
  }
  return outcome;
}
