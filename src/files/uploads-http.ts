import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { optionalPrincipal, requirePrincipal } from "../auth/authenticate.ts";
import { isMultipartForm, readCappedForm } from "../http/body-limit.ts";
import { requestMeta } from "../http/request-meta.ts";
import { errors } from "../http/schemas.ts";
import { replayResponse } from "../idempotency/idempotency.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { downloadHeaders } from "./download-headers.ts";
import { createReplicateFile } from "./replicate-files.ts";
import { checkUploadLink } from "./signing.ts";
import { FILE_ID, type FileRow, type FileStore, fileView } from "./store.ts";
import { storedFile } from "./stored-file.ts";
import { createUpload } from "./uploads.ts";

const FileSchema = t.Object(
  {
    file_id: t.String({
      description: 'Opaque id with the "file_" prefix; put it in any URL field of a model input.',
    }),
    object: t.Literal("file"),
    content_type: t.String(),
    size: t.Integer(),
    sha256: t.String(),
    width: t.Optional(t.Integer()),
    height: t.Optional(t.Integer()),
    created_at: t.String({ format: "date-time" }),
    expires_at: t.String({ format: "date-time" }),
  },
  { title: "File" },
);
const IdParams = t.Object({ id: t.String() });

async function ownedFile(ctx: { files: FileStore }, accountId: string, id: string): Promise<FileRow> {
  if (!FILE_ID.test(id))
    throw new DomainError("validation_error", 'file_id must look like "file_" + 24 letters and digits.', {
      param: "file_id",
    });
  const f = await ctx.files.getLive(id, accountId);
  if (!f) throw new DomainError("not_found", `No file ${id}.`, { param: "file_id" });
  return f;
}

/** Room for the metadata part and the form's framing beside the file, which upload_max_bytes bounds. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** Uploads: raw bytes in, a file id out; metadata, delete and content. */
export function fileRoutes(ctx: AppContext) {
  /** A Replicate client's upload (multipart `content` + `metadata`): Replicate's file object. */
  async function replicateUpload(principal: Principal, request: Request): Promise<Response> {
    const form = await readCappedForm(request, ctx.live.limits.uploadMaxBytes + FORM_OVERHEAD_BYTES);
    const file = await createReplicateFile(ctx, principal, {
      content: form.get("content"),
      metadata: form.get("metadata"),
    });
    return new Response(JSON.stringify(file), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  }

  return new Elysia({ prefix: "/v1", detail: { tags: ["Files"], security: [{ apiKey: [] }] } })
    .post(
      "/files",
      async ({ request }) => {
        const principal = await requirePrincipal(ctx, request);
        if (isMultipartForm(request)) return await replicateUpload(principal, request);
        const created = await createUpload(ctx, principal, request);
        if (created.replay) return replayResponse(created.replay, 200);
        return new Response(created.value, { status: 201, headers: { "content-type": "application/json" } });
      },
      {
        parse: "none",
        detail: {
          summary: "Upload a file",
          description:
            "Raw bytes with their Content-Type (image/*, video/*, audio/*; the magic bytes must agree), streamed to disk. 201 with the file_id; Idempotency-Key replays answer 200. A multipart body with a `content` file part (and an optional JSON `metadata` part) is Replicate's files API, as Replicate's clients upload a Blob input: the same checks, answered with Replicate's file object, whose `urls.get` any model input takes.",
          requestBody: {
            required: true,
            content: {
              "application/octet-stream": { schema: { type: "string", format: "binary" } },
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["content"],
                  properties: {
                    content: { type: "string", format: "binary" },
                    metadata: { type: "string", description: "A JSON object kept with the file." },
                  },
                },
              },
            },
          },
        },
        response: { 201: FileSchema, 200: FileSchema, ...errors(400, 401, 409, 413, 415, 429, 507) },
      },
    )
    .get(
      "/files/:id",
      async ({ request, params }) =>
        fileView(await ownedFile(ctx, (await requirePrincipal(ctx, request)).accountId, params.id)),
      {
        params: IdParams,
        detail: { summary: "Get a file", description: "Metadata of an uploaded file of this account." },
        response: { 200: FileSchema, ...errors(400, 401, 404) },
      },
    )
    .delete(
      "/files/:id",
      async ({ request, params }) => {
        const f = await ownedFile(ctx, (await requirePrincipal(ctx, request)).accountId, params.id);
        await ctx.files.delete(f);
        return { file_id: f.id, deleted: true as const };
      },
      {
        params: IdParams,
        detail: {
          summary: "Delete a file",
          description: "Removes the bytes; later references to it are 400 unknown_file.",
        },
        response: {
          200: t.Object({ file_id: t.String(), deleted: t.Literal(true) }),
          ...errors(400, 401, 404),
        },
      },
    )
    .get(
      "/files/:id/content",
      async ({ request, params, query }) => {
        if (!FILE_ID.test(params.id))
          throw new DomainError("validation_error", "Malformed file_id.", { param: "file_id" });
        let file: FileRow | null = null;
        if (query.exp !== undefined || query.sig !== undefined) {
          const link = checkUploadLink(ctx.signer, params.id, query.exp, query.sig);
          if (link === "forbidden") throw new DomainError("forbidden", "The link's signature is not valid.");
          if (link === "expired") throw new DomainError("expired", "This signed link has expired.");
          file = await ctx.files.getById(params.id);
        } else {
          const p = await optionalPrincipal(ctx, request);
          if (!p)
            throw new DomainError("unauthorized", "Send a signed link (exp and sig) or the owning key.");
          file = await ctx.files.getLive(params.id, p.accountId);
        }
        if (!file) throw new DomainError("not_found", `No file ${params.id}.`);
        const blob = await storedFile(requestMeta(request)?.id, ctx.blobs, file.path, Number(file.size), {
          file_id: file.id,
        });
        return new Response(blob.body(), {
          headers: {
            ...downloadHeaders(file.content_type, file.id),
            "content-length": String(file.size),
            etag: `"${file.sha256}"`,
            "cache-control": "private, max-age=3600",
          },
        });
      },
      {
        params: IdParams,
        query: t.Object({ exp: t.Optional(t.String()), sig: t.Optional(t.String()) }),
        detail: {
          summary: "Download an uploaded file",
          description: "With the owning key, or a signed link (how upstream providers fetch file_id inputs).",
          security: [{}, { apiKey: [] }],
          responses: {
            200: {
              description: "The bytes",
              content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
            },
          },
        },
        response: errors(400, 401, 403, 404, 410),
      },
    );
}
