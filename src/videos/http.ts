import { Elysia } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { uploadRequestOf } from "../files/uploads.ts";
import { parseJsonCapped, readCappedForm } from "../http/body-limit.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import { claimOf, replayResponse } from "../idempotency/idempotency.ts";
import { DomainError } from "../lib/errors.ts";
import { normalizeContentType } from "../lib/magic.ts";
import type { AppContext } from "../server/context.ts";
import { formFields } from "./input.ts";
import { VIDEO_DOCS } from "./openapi.ts";
import {
  VideoContentQuery,
  VideoDeletedSchema,
  VideoIdParams,
  VideoListQuery,
  VideoListSchema,
  VideoSchema,
} from "./schemas.ts";
import {
  createVideo,
  deleteVideo,
  listVideos,
  retrieveVideo,
  type VideoBody,
  videoContent,
} from "./service.ts";

/** Room for a multipart body's text fields beside its file, which upload_max_bytes bounds. */
const FORM_FIELDS_BYTES = 1024 * 1024;

type ById = { principal: Principal; params: { id: string } };

/**
 * A create body as the SDKs send it: multipart/form-data (openai-node and openai-python always do:
 * node_modules/openai/resources/videos.js, the Python package's resources/videos.py), read whole
 * under upload_max_bytes plus 1 MiB; or JSON. An input_reference file becomes an upload request of its own (its declared type,
 * or the one its bytes show when it came as application/octet-stream). Returns the body and the
 * Idempotency fingerprint's stand-in (the fields and the file's digest).
 */
async function readVideoBody(
  ctx: AppContext,
  request: Request,
  parsed: unknown,
): Promise<{ body: VideoBody; print: unknown }> {
  const type = normalizeContentType(request.headers.get("content-type"));
  if (type !== "multipart/form-data") {
    // The app's parse hook has read a JSON body already (with its caps); anything else is read here.
    const json = request.bodyUsed ? parsed : await parseJsonCapped(request);
    if (json === null || typeof json !== "object" || Array.isArray(json))
      throw new DomainError("validation_error", "The body must be a JSON object or a multipart form.");
    return { body: { fields: json as Record<string, unknown>, reference: null }, print: json };
  }
  const form = await readCappedForm(request, ctx.live.limits.uploadMaxBytes + FORM_FIELDS_BYTES);
  const texts: [string, string][] = [];
  let file: Blob | null = null;
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") texts.push([name, value]);
    else if (name === "input_reference" && file === null) file = value;
    else
      throw new DomainError("validation_error", "Only input_reference may be a file.", {
        param: name.slice(0, 64),
      });
  }
  const model = form.get("model");
  const fields = formFields(texts, typeof model === "string" ? ctx.catalog.get(model) : undefined);
  if (file === null) return { body: { fields, reference: null }, print: fields };
  const reference = await uploadRequestOf(file);
  const fileType = reference.headers.get("content-type") ?? "";
  // Hashed in chunks: the form already holds the file, one more whole copy would double it.
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of file.stream()) hasher.update(chunk);
  const sha256 = hasher.digest("hex");
  return { body: { fields, reference }, print: { fields, input_reference: { type: fileType, sha256 } } };
}

/** OpenAI's videos API: POST/GET /v1/videos, GET/DELETE /v1/videos/{id}, GET /v1/videos/{id}/content. */
export function videoRoutes(ctx: AppContext) {
  async function create(r: { principal: Principal; request: Request; body: unknown }) {
    const { principal, request } = r;
    const { body, print } = await readVideoBody(ctx, request, r.body);
    const created = await createVideo(ctx, principal, body, claimOf(request, print));
    if (created.replay) return replayResponse(created.replay);
    return jsonResponse(JSON.stringify(created.video));
  }

  async function list({ principal, query }: { principal: Principal; query: typeof VideoListQuery.static }) {
    return await listVideos(ctx, principal, query);
  }

  async function retrieve({ principal, params }: ById) {
    return await retrieveVideo(ctx, principal, params.id);
  }

  async function content(r: ById & { query: typeof VideoContentQuery.static; request: Request }) {
    return await videoContent(ctx, r.principal, r.params.id, r.query.variant, r.request);
  }

  async function remove({ principal, params }: ById) {
    return await deleteVideo(ctx, principal, params.id);
  }

  return new Elysia({ prefix: "/v1", detail: { tags: ["OpenAI videos"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post("/videos", create, {
      parse: "none",
      detail: VIDEO_DOCS.create,
      response: { 200: VideoSchema, ...errors(400, 401, 402, 409, 413, 415, 429, 503, 507) },
    })
    .get("/videos", list, {
      query: VideoListQuery,
      detail: VIDEO_DOCS.list,
      response: { 200: VideoListSchema, ...errors(400, 401) },
    })
    .get("/videos/:id", retrieve, {
      params: VideoIdParams,
      detail: VIDEO_DOCS.retrieve,
      response: { 200: VideoSchema, ...errors(401, 404) },
    })
    .get("/videos/:id/content", content, {
      params: VideoIdParams,
      query: VideoContentQuery,
      detail: VIDEO_DOCS.content,
      response: errors(401, 404, 409, 416, 429),
    })
    .delete("/videos/:id", remove, {
      params: VideoIdParams,
      detail: VIDEO_DOCS.remove,
      response: { 200: VideoDeletedSchema, ...errors(401, 404, 409) },
    });
}
