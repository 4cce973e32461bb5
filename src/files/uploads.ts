import type { Principal } from "../accounts/store.ts";
import { idempotencyKeyOf, type Once, requestFingerprint } from "../idempotency/idempotency.ts";
import { sniffImageSize } from "../lib/image-size.ts";
import { errorFields, log } from "../lib/log.ts";
import { contentTypeOf, familyOf, normalizeContentType, SNIFF_BYTES } from "../lib/magic.ts";
import type { AppContext } from "../server/context.ts";
import { type FileRow, fileView } from "./store.ts";
import { type ReceivedUpload, receiveUpload } from "./upload-stream.ts";

/** What an upload uses: the blob store, the live limits and retention, the files table. */
export type UploadDeps = Pick<AppContext, "blobs" | "live" | "files">;

/** What POST /v1/files uses besides: the database and the Idempotency-Key's store, in one transaction. */
export type KeyedUploadDeps = UploadDeps & Pick<AppContext, "sql" | "idempotency">;

/** The files row of a received upload: its account (and key; null from the studio), measured image size and expiry. */
export function uploadRow(
  ctx: Pick<AppContext, "live">,
  up: ReceivedUpload,
  owner: { accountId: string; keyId: string | null },
): FileRow {
  const size = up.contentType.startsWith("image/") ? sniffImageSize(up.head) : null;
  const now = Date.now();
  return {
    id: up.id,
    account_id: owner.accountId,
    key_id: owner.keyId,
    content_type: up.contentType,
    size: BigInt(up.size),
    sha256: up.sha256,
    path: up.path,
    width: size ? BigInt(size.width) : null,
    height: size ? BigInt(size.height) : null,
    created_at: BigInt(now),
    expires_at: BigInt(now + ctx.live.files.retentionMs),
    deleted_at: null,
  };
}

/**
 * An upload outside POST /v1/files (the studio's, for a signed-in person: no key; the OpenAI videos
 * door's input_reference: the key's): the same receiveUpload checks as POST /v1/files (allowed
 * type, magic bytes, size limit, free disk), a file of the account. Returns the stored row.
 */
export async function createAccountUpload(
  ctx: UploadDeps,
  accountId: string,
  request: Request,
  keyId: string | null = null,
): Promise<FileRow> {
  return await createOwnedUpload(ctx, { accountId, keyId }, request);
}

/**
 * An upload of an account made by a door as part of a call (the studio's, OpenAI's image edits):
 * the same receiveUpload checks as POST /v1/files, a files row of the account and key (null: none),
 * with no Idempotency-Key of its own (the call has it). Returns the stored row.
 */
export async function createOwnedUpload(
  ctx: UploadDeps,
  owner: { accountId: string; keyId: string | null },
  request: Request,
): Promise<FileRow> {
  const up = await receiveUpload(request, ctx.blobs, {
    maxBytes: ctx.live.limits.uploadMaxBytes,
    minFreeBytes: ctx.live.files.minFreeBytes,
  });
  const row = uploadRow(ctx, up, owner);
  await ctx.files.insert(row);
  return row;
}

/**
 * POST /v1/files: the raw bytes streamed to the blob backend (a malformed Idempotency-Key is refused before),
 * then the files row and the key's record in one IMMEDIATE transaction. The fingerprint's body is
 * the upload's type and digest. A replay keeps the first upload and deletes the duplicate's bytes.
 * Returns the file's view as JSON text (201), or the stored answer to replay.
 */
export async function createUpload(
  ctx: KeyedUploadDeps,
  principal: Principal,
  request: Request,
): Promise<Once<string>> {
  const key = idempotencyKeyOf(request);
  const up = await receiveUpload(request, ctx.blobs, {
    maxBytes: ctx.live.limits.uploadMaxBytes,
    minFreeBytes: ctx.live.files.minFreeBytes,
  });
  const row = uploadRow(ctx, up, principal);
  const claim =
    key === null
      ? null
      : {
          key,
          fingerprint: requestFingerprint(request, { content_type: up.contentType, sha256: up.sha256 }),
        };
  const outcome = await ctx.sql.tx(
    async (tx) =>
      await ctx.idempotency.in(tx).once(
        principal.keyId,
        claim,
        async () => {
          await ctx.files.in(tx).insert(row);
          return JSON.stringify(fileView(row));
        },
        (body) => ({ status: 201, body }),
      ),
  );
  if (outcome.replay) {
    // The duplicate's bytes are not kept; a store that cannot be reached now leaves them (logged),
    // the replayed answer stands.
    await ctx.blobs
      .delete([up.path])
      .catch((err) => log("warn", "stored bytes not removed", { path: up.path, ...errorFields(err) }));
  }
  return outcome;
}

/**
 * A file part of a multipart body (an OpenAI video's input_reference, a Replicate file) as the
 * upload request receiveUpload reads: its declared type when it names a media family, otherwise
 * the type its first bytes show (clients send Buffers as application/octet-stream), so the usual
 * type and magic-byte checks apply.
 */
export async function uploadRequestOf(file: Blob): Promise<Request> {
  const declared = normalizeContentType(file.type);
  const head = new Uint8Array(await file.slice(0, SNIFF_BYTES).arrayBuffer());
  const type = (declared && familyOf(declared) ? declared : contentTypeOf(head, null)) ?? declared ?? "";
  return new Request("http://upload.invalid/", {
    method: "POST",
    body: file,
    headers: { "content-type": type, "content-length": String(file.size) },
  });
}
