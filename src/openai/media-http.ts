import { Elysia } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import type { Model } from "../catalog/model.ts";
import { readCappedForm } from "../http/body-limit.ts";
import { requestMeta } from "../http/request-meta.ts";
import { jsonResponse } from "../http/schemas.ts";
import { claimOf, REPLAYED_HEADER } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { mapImageRequest, mapSpeechRequest } from "./media-map.ts";
import {
  type EditForm,
  imagesAnswer,
  openaiMediaModel,
  runOpenAIMedia,
  speechAudio,
  storeEditParts,
} from "./media-service.ts";
import { IMAGES_EDITS_OPENAPI, IMAGES_GENERATIONS_OPENAPI, SPEECH_OPENAPI } from "./openapi.ts";

/**
 * Largest multipart body of an edit, read into memory before its parts are stored: OpenAI takes
 * images up to 50 MB each for its GPT image models (4 MB for dall-e-2), so 64 MiB holds one such
 * image with its mask; the operator's upload_max_bytes caps it lower.
 */
export const EDIT_FORM_MAX = 64 * 1024 * 1024;

type Call = { request: Request; body: unknown };

/**
 * An edit's multipart form, read with the cap (Content-Length first, then counted while streaming;
 * never request.formData(), which buffers whatever the client sends): `image` / `image[]` parts
 * (files, or gengate file ids), an optional `mask`, the other fields as text.
 */
async function readEditForm(request: Request, max: number): Promise<EditForm> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    throw new DomainError("unsupported_media_type", "Send the edit as multipart/form-data.");
  }
  const form = await readCappedForm(request, max);
  const out: EditForm = { fields: {}, images: [], mask: null };
  for (const [name, value] of form.entries()) {
    if (name === "image" || name === "image[]") out.images.push(value as File | string);
    else if (name === "mask") out.mask = value as File | string;
    else if (typeof value === "string") out.fields[name] = value;
    else throw new DomainError("validation_error", `${name} must be a text field.`, { param: name });
  }
  return out;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DomainError("validation_error", "The request body must be a JSON object.", { param: "body" });
  }
  return body as Record<string, unknown>;
}

/** POST /v1/images/generations, /v1/images/edits, /v1/audio/speech: OpenAI's synchronous media calls. */
export function openaiMediaRoutes(ctx: AppContext) {
  /** Runs the call's job; once a job was opened, an error tells OpenAI's clients not to retry (a retry is a new job). */
  async function run(
    request: Request,
    principal: Principal,
    model: Model,
    input: Record<string, unknown>,
    fingerprintBody: unknown,
  ) {
    try {
      return await runOpenAIMedia(ctx, {
        who: apiOpener(ctx, principal),
        keyId: principal.keyId,
        model,
        input,
        claim: claimOf(request, fingerprintBody),
        signal: request.signal,
      });
    } catch (err) {
      const meta = requestMeta(request);
      if (err instanceof DomainError && err.extra?.request_id && meta) {
        meta.extraHeaders = { ...meta.extraHeaders, "x-should-retry": "false" };
      }
      throw err;
    }
  }

  /** Every answer names its job (GET /v1/requests/{id}); a replay says so. */
  const answerHeaders = (out: { job: { id: string }; replayed: boolean }): Record<string, string> => ({
    "x-gengate-request-id": out.job.id,
    ...(out.replayed ? { [REPLAYED_HEADER]: "true" } : {}),
  });

  async function generations({ request, body }: Call) {
    const principal = await requirePrincipal(ctx, request);
    const req = objectBody(body);
    const model = openaiMediaModel(ctx, principal, req.model, "image");
    const mapped = mapImageRequest(model, req);
    const out = await run(request, principal, model, mapped.input, body);
    const answer = await imagesAnswer(ctx, out.job, mapped.responseFormat);
    return jsonResponse(JSON.stringify(answer), 200, answerHeaders(out));
  }

  async function edits({ request }: Call) {
    const principal = await requirePrincipal(ctx, request);
    const form = await readEditForm(request, Math.min(ctx.live.limits.uploadMaxBytes, EDIT_FORM_MAX));
    const model = openaiMediaModel(ctx, principal, form.fields.model, "image");
    // Checked before anything is stored: a refused edit leaves no upload behind.
    mapImageRequest(model, form.fields, {
      images: form.images.map(() => "file"),
      mask: form.mask ? "file" : null,
    });
    const stored = await storeEditParts(ctx, principal, form);
    const mapped = mapImageRequest(model, form.fields, { images: stored.images, mask: stored.mask });
    const out = await run(request, principal, model, mapped.input, { ...form.fields, ...stored.fingerprint });
    const answer = await imagesAnswer(ctx, out.job, mapped.responseFormat);
    return jsonResponse(JSON.stringify(answer), 200, answerHeaders(out));
  }

  async function speech({ request, body }: Call) {
    const principal = await requirePrincipal(ctx, request);
    const req = objectBody(body);
    const model = openaiMediaModel(ctx, principal, req.model, "audio");
    const out = await run(request, principal, model, mapSpeechRequest(model, req), body);
    const audio = await speechAudio(ctx, request, out.job);
    return new Response(audio.blob.body(), {
      headers: { "content-type": audio.contentType, ...answerHeaders(out) },
    });
  }

  return new Elysia({ prefix: "/v1", detail: { tags: ["OpenAI media"], security: [{ apiKey: [] }] } })
    .post("/images/generations", generations, { detail: IMAGES_GENERATIONS_OPENAPI })
    .post("/images/edits", edits, { parse: "none", detail: IMAGES_EDITS_OPENAPI })
    .post("/audio/speech", speech, { detail: SPEECH_OPENAPI });
}
