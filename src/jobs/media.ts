import { validateModelInput } from "../catalog/validate-input.ts";
import { ownFileUrlsToIds, resolveFileRefs, uploadedImageSize } from "../files/references.ts";
import type { FileStore } from "../files/store.ts";
import { DomainError } from "../lib/errors.ts";
import { priceMediaInput } from "../pricing/media.ts";
import { type ModelDeps, resolveMediaModel } from "./models.ts";
import type { JobToOpen, Opener } from "./open.ts";

/** What a media door was asked: the model, its input (the body) and a webhook URL. */
export interface MediaSubmit {
  who: Opener;
  modelId: string;
  /** The model input; may carry webhook_url. */
  body: unknown;
  /** webhook_url from the query (or its fal alias fal_webhook); null when the door has none. */
  queryWebhook: string | null;
}

/** What preparing a media job uses besides the catalog: the uploads, this server's address, the webhook policy. */
export interface MediaJobDeps extends ModelDeps {
  files: FileStore;
  /** Links to this server's own uploads count as their file ids. */
  publicUrl: string;
  /** The webhook URL policy (src/webhooks/url-policy.ts), with its DNS check. */
  checkWebhookUrl(raw: string): Promise<URL>;
}

/**
 * A media door's input made a job to open: resolve the model, validate the input against its
 * schema, resolve file references and price it; the async part (the webhook URL's DNS check) runs
 * here, before the opening's transaction.
 */
export async function prepareMediaJob(deps: MediaJobDeps, s: MediaSubmit): Promise<JobToOpen> {
  const model = resolveMediaModel(deps, s.modelId, s.who);
  const body = s.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DomainError("validation_error", "The request body must be a JSON object: the model input.", {
      param: "body",
    });
  }
  // Links to this server's own uploads (as fal.storage.upload returns them) count as their file ids.
  const { webhook_url: bodyWebhook, ...raw } = ownFileUrlsToIds(body, deps.publicUrl) as Record<
    string,
    unknown
  >;
  if (bodyWebhook !== undefined && typeof bodyWebhook !== "string") {
    throw new DomainError("bad_webhook_url", "webhook_url must be a string URL.", { param: "webhook_url" });
  }
  const webhookRaw = (bodyWebhook as string | undefined) ?? s.queryWebhook;
  // The input as validated: the value forms clients send made the schema's, priced and stored so.
  const input = await validateModelInput(model, raw);
  const files = await resolveFileRefs(deps.files, s.who.accountId, input);
  // Per-megapixel upscales are priced on an uploaded image's measured size.
  const quote = priceMediaInput(model, input, { imageSize: uploadedImageSize(files) });
  const webhookUrl = webhookRaw ? (await deps.checkWebhookUrl(webhookRaw)).toString() : null;
  return { who: s.who, model, input: JSON.stringify(input), quote, webhookUrl };
}
