import { Elysia, t } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { errors } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import { ID_PATTERN, randomBase62 } from "../lib/ids.ts";
import { ALLOWED_CONTENT_TYPES, familyOf, normalizeContentType } from "../lib/magic.ts";
import type { AppContext } from "../server/context.ts";
import { fileContentUrl } from "./references.ts";
import { FILE_ID, fileView } from "./store.ts";
import { receiveUpload } from "./upload-stream.ts";
import { uploadRow } from "./uploads.ts";

/** How long an upload URL handed out by initiate stays usable (fal's are short-lived too). */
const UPLOAD_URL_TTL_SECONDS = 3600;

/** What the upload URL's signature covers: the account, the key, the file id (and the expiry). */
const capability = (accountId: string, keyId: string, fileId: string) =>
  `fal-upload.${accountId}.${keyId}.${fileId}`;

/**
 * The storage-upload protocol of @fal-ai/client (1.x, fal-ai/fal-js libs/client/src/storage.ts), so
 * `fal.storage.upload` and the Blob inputs it uploads land in this server's file store:
 *
 * 1. `POST {rest}/storage/upload/initiate?storage_type=fal-cdn-v3` with the key and
 *    `{"content_type", "file_name"}` answers `{"upload_url", "file_url"}`.
 * 2. The client PUTs the bytes to `upload_url` with plain fetch: no Authorization header, so the
 *    URL itself carries a signed capability (account, key, file id, expiry; an hour).
 * 3. It returns `file_url` (`{public_url}/v1/files/{file_id}/content`), which works as a model input
 *    (submit reads it as the file id) and downloads with the owning key.
 *
 * The PUT goes through the same checks as POST /v1/files (allowed Content-Type, magic bytes, size
 * limit, free disk) and the file belongs to the key's account. Redirect the client's REST host
 * (https://rest.fal.ai) to {public_url}/v1 with requestMiddleware, as for queue.fal.run.
 */
export function falStorageRoutes(ctx: AppContext) {
  // Upload ids whose bytes are being received: a second PUT to the same URL meanwhile is 409.
  const receiving = new Set<string>();
  return new Elysia({ prefix: "/v1/storage/upload", detail: { tags: ["fal compatibility"] } })
    .post(
      "/initiate",
      async ({ request, body }) => {
        const principal = await requirePrincipal(ctx, request);
        const contentType = normalizeContentType(body.content_type);
        if (!contentType || !familyOf(contentType)) {
          throw new DomainError(
            "unsupported_media_type",
            `content_type ${body.content_type.slice(0, 100)} is not accepted; use one of: ${ALLOWED_CONTENT_TYPES.join(", ")}.`,
            { param: "content_type" },
          );
        }
        const fileId = `file_${randomBase62(24)}`;
        const exp = Math.floor(Date.now() / 1000) + UPLOAD_URL_TTL_SECONDS;
        const sig = ctx.signer.sign(capability(principal.accountId, principal.keyId, fileId), 0, exp);
        const q = new URLSearchParams({
          account: principal.accountId,
          key: principal.keyId,
          exp: String(exp),
          sig,
        });
        return {
          upload_url: `${ctx.publicUrl}/v1/storage/upload/${fileId}?${q}`,
          file_url: fileContentUrl(ctx.publicUrl, fileId),
        };
      },
      {
        query: t.Object({ storage_type: t.Optional(t.String()) }),
        body: t.Object({
          content_type: t.String({ minLength: 1, maxLength: 255 }),
          file_name: t.Optional(t.String({ maxLength: 1024 })),
        }),
        detail: {
          summary: "Start a fal-style upload",
          description:
            "fal's storage protocol (@fal-ai/client storage.upload): answers upload_url (PUT the bytes there, no key needed, valid one hour) and file_url (the file as a model input).",
          security: [{ apiKey: [] }],
        },
        response: {
          200: t.Object({ upload_url: t.String(), file_url: t.String() }),
          ...errors(400, 401, 415, 429),
        },
      },
    )
    .post(
      "/initiate-multipart",
      async ({ request }) => {
        await requirePrincipal(ctx, request);
        throw new DomainError(
          "payload_too_large",
          "Multipart uploads (files over 90 MB) are not served on the fal storage protocol; upload the file with POST /v1/files.",
        );
      },
      {
        parse: "none",
        detail: {
          summary: "fal multipart upload (not served)",
          description: "Always 413: upload large files with POST /v1/files.",
          security: [{ apiKey: [] }],
        },
        response: errors(401, 413),
      },
    )
    .put(
      "/:fileId",
      async ({ request, params, query }) => {
        const { account, key, sig } = query;
        const exp = Number(query.exp);
        if (
          !FILE_ID.test(params.fileId) ||
          !ID_PATTERN.test(account) ||
          !ID_PATTERN.test(key) ||
          !/^\d{1,12}$/.test(query.exp) ||
          !ctx.signer.verify(capability(account, key, params.fileId), 0, exp, sig)
        ) {
          throw new DomainError("forbidden", "This upload URL is not valid; start a new upload.");
        }
        if (exp < Math.floor(Date.now() / 1000))
          throw new DomainError("expired", "This upload URL has expired; start a new upload.");
        const keyRow = await ctx.accounts.getKey(account, key);
        if (keyRow.revoked_at !== null)
          throw new DomainError("unauthorized", "The key that started this upload has been revoked.");
        if (receiving.has(params.fileId) || (await ctx.files.getById(params.fileId)))
          throw new DomainError("conflict", "This upload URL has already been used.");
        receiving.add(params.fileId);
        try {
          const up = await receiveUpload(request, ctx.blobs, {
            maxBytes: ctx.live.limits.uploadMaxBytes,
            minFreeBytes: ctx.live.files.minFreeBytes,
            id: params.fileId,
          });
          const row = uploadRow(ctx, up, { accountId: account, keyId: key });
          await ctx.files.insert(row);
          return fileView(row);
        } finally {
          receiving.delete(params.fileId);
        }
      },
      {
        parse: "none",
        params: t.Object({ fileId: t.String() }),
        query: t.Object({ account: t.String(), key: t.String(), exp: t.String(), sig: t.String() }),
        detail: {
          summary: "Receive a fal-style upload",
          description:
            "The raw bytes with their Content-Type, to the upload_url from initiate; the same checks as POST /v1/files.",
          security: [{}],
        },
        response: errors(400, 401, 403, 404, 409, 410, 413, 415, 507),
      },
    );
}
