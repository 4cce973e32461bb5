/**
 * Replicate's files API as its JavaScript client uses it: `replicate.run` with a Blob, File or
 * Buffer in the input uploads it first (replicate lib/util.js transformFileInputsToReplicateFileURLs:
 * `POST {baseUrl}/files`, multipart with the bytes in `content` and a JSON `metadata` part, see
 * lib/files.js createFile) and puts the answer's `urls.get` in the input. Here that upload is an
 * upload of the account like POST /v1/files (same type, magic-byte, size and disk checks), and
 * `urls.get` is the file's content link on this server, which every door's input reading turns
 * back into the file id (files/references.ts ownFileUrlsToIds): the job reads it from the store,
 * for its own account only.
 */
import type { Principal } from "../accounts/store.ts";
import { DomainError } from "../lib/errors.ts";
import { fileContentUrl } from "./references.ts";
import type { FileRow } from "./store.ts";
import { createAccountUpload, type UploadDeps, uploadRequestOf } from "./uploads.ts";

/** Replicate's file object (its HTTP API, "files.create"). */
export interface ReplicateFile {
  id: string;
  name: string;
  content_type: string;
  size: number;
  etag: string;
  checksums: { sha256: string };
  metadata: Record<string, unknown>;
  created_at: string;
  expires_at: string;
  urls: { get: string };
}

/** Largest `metadata` part kept (Replicate stores a small JSON object beside the file). */
const METADATA_MAX_CHARS = 16 * 1024;

/** The parts of Replicate's upload form: `content` (the file) and `metadata` (JSON text or a JSON part). */
export interface ReplicateFileForm {
  content: unknown;
  metadata: unknown;
}

export type ReplicateFileDeps = UploadDeps & { publicUrl: string };

/** Stores a Replicate client's upload as an upload of the caller's account; its file object. */
export async function createReplicateFile(
  deps: ReplicateFileDeps,
  principal: Principal,
  form: ReplicateFileForm,
): Promise<ReplicateFile> {
  if (!(form.content instanceof Blob)) {
    throw new DomainError("validation_error", "content must be a file part of the multipart body.", {
      param: "content",
    });
  }
  const metadata = await metadataOf(form.metadata);
  const name = form.content instanceof File && form.content.name ? form.content.name : "file";
  const row = await createAccountUpload(
    deps,
    principal.accountId,
    await uploadRequestOf(form.content),
    principal.keyId,
  );
  return replicateFileView(deps.publicUrl, row, name.slice(0, 255), metadata);
}

async function metadataOf(part: unknown): Promise<Record<string, unknown>> {
  if (part === null || part === undefined) return {};
  const text = part instanceof Blob ? (part.size > METADATA_MAX_CHARS ? null : await part.text()) : part;
  if (typeof text !== "string" || text.length > METADATA_MAX_CHARS) {
    throw new DomainError(
      "validation_error",
      `metadata must be a JSON object of at most ${METADATA_MAX_CHARS} characters.`,
      {
        param: "metadata",
      },
    );
  }
  let parsed: unknown;
  try {
    parsed = text === "" ? {} : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new DomainError("validation_error", "metadata must be a JSON object.", { param: "metadata" });
  }
  return parsed as Record<string, unknown>;
}

function replicateFileView(
  publicUrl: string,
  f: FileRow,
  name: string,
  metadata: Record<string, unknown>,
): ReplicateFile {
  return {
    id: f.id,
    name,
    content_type: f.content_type,
    size: Number(f.size),
    etag: f.sha256,
    checksums: { sha256: f.sha256 },
    metadata,
    created_at: new Date(Number(f.created_at)).toISOString(),
    expires_at: new Date(Number(f.expires_at)).toISOString(),
    urls: { get: fileContentUrl(publicUrl, f.id) },
  };
}
