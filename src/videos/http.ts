import { Elysia } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { parseJsonCapped, readCapped } from "../http/body-limit.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import { claimOf, replayResponse } from "../idempotency/idempotency.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import { contentTypeOf, familyOf, normalizeContentType, SNIFF_BYTES } from "../lib/magic.ts";
import type { AppContext } from "../server/context.ts";
import { formFields } from "./input.ts";
import {
  CREATE_REQUEST_BODY,
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
 * A create body as the SDKs send it: multipart/form-data (openai-node and openai-python always
 * do: node_modules/openai/resources/videos.js and the Python package's resources/videos.py), read whole under upload_max_bytes plus
 * 1 MiB; or JSON. An input_reference file becomes an upload request of its own (its declared type,
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
  const bytes = await readCapped(request, ctx.live.limits.uploadMaxBytes + FORM_FIELDS_BYTES);
  let form: Awaited<ReturnType<Request["formData"]>>;
  try {
    form = await new Response(bytes, {
      headers: { "content-type": request.headers.get("content-type")! },
    }).formData();
  } catch {
    throw new DomainError("validation_error", "The multipart body could not be read.");
  }
  const texts: [string, string][] = [];
  let file: Blob | null = null;
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") texts.push([name, value]);
    else if (name === "input_reference" && file === null) file = value;
    else throw new DomainError("validation_error", `Only input_reference may be a file.`, { param: name });
  }
  const model = form.get("model");
  const fields = formFields(texts, typeof model === "string" ? ctx.catalog.get(model) : undefined);
  if (file === null) return { body: { fields, reference: null }, print: fields };
  const head = new Uint8Array(await file.slice(0, SNIFF_BYTES).arrayBuffer());
  const declared = normalizeContentType(file.type);
  const fileType = (declared && familyOf(declared) ? declared : contentTypeOf(head, null)) ?? declared ?? "";
  const sha256 = new Bun.CryptoHasher("sha256").update(await file.arrayBuffer()).digest("hex");
  const reference = new Request("http://input-reference.invalid/", {
    method: "POST",
    body: file,
    headers: { "content-type": fileType, "content-length": String(file.size) },
  });
  return { body: { fields, reference }, print: { fields, input_reference: { type: fileType, sha256 } } };
}

/** OpenAI's list query: limit 1..100 (20), after a video id, order desc|asc; 400 naming the one at fault. */
function listQuery(q: { after?: string; limit?: string; order?: string }) {
  const limit = q.limit === undefined ? 20 : /^\d{1,3}$/.test(q.limit) ? Number(q.limit) : 0;
  if (limit < 1 || limit > 100)
    throw new DomainError("validation_error", "limit must be an integer from 1 to 100.", { param: "limit" });
  if (q.after !== undefined && q.after !== "" && !UUID_PATTERN.test(q.after))
    throw new DomainError("validation_error", "after must be the id of a video.", { param: "after" });
  if (q.order !== undefined && q.order !== "asc" && q.order !== "desc")
    throw new DomainError("validation_error", "order must be asc or desc.", { param: "order" });
  return { limit, after: q.after || null, order: (q.order ?? "desc") as "asc" | "desc" };
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
    return await listVideos(ctx, principal, listQuery(query));
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
      detail: {
        summary: "Create a video (OpenAI)",
        description:
          "OpenAI's videos.create: opens one queue job of a video or avatar model (the estimate is held) and answers the video object at once; its id is the request id. Idempotency-Key replays the first answer.",
        requestBody: CREATE_REQUEST_BODY,
      },
      response: { 200: VideoSchema, ...errors(400, 401, 402, 409, 413, 415, 429, 503, 507) },
    })
    .get("/videos", list, {
      query: VideoListQuery,
      detail: {
        summary: "List videos (OpenAI)",
        description: "The account's video and avatar jobs as OpenAI's cursor list.",
      },
      response: { 200: VideoListSchema, ...errors(400, 401) },
    })
    .get("/videos/:id", retrieve, {
      params: VideoIdParams,
      detail: {
        summary: "Retrieve a video (OpenAI)",
        description: "The video object; poll it until completed or failed.",
      },
      response: { 200: VideoSchema, ...errors(401, 404) },
    })
    .get("/videos/:id/content", content, {
      params: VideoIdParams,
      query: VideoContentQuery,
      detail: {
        summary: "Download a video (OpenAI)",
        description:
          "The stored video (Range answers 206 and does not count against the download cap). 409 request_not_ready before it completes.",
        responses: {
          200: {
            description: "The video",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
        },
      },
      response: errors(401, 404, 409, 416, 429),
    })
    .delete("/videos/:id", remove, {
      params: VideoIdParams,
      detail: {
        summary: "Delete a video (OpenAI)",
        description:
          "Queued: cancelled, its hold released. Completed: its stored files deleted. In progress: 409 not_cancellable.",
      },
      response: { 200: VideoDeletedSchema, ...errors(401, 404, 409) },
    });
}
