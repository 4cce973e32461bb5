import { statSync } from "node:fs";
import { requestMeta } from "../http/request-meta.ts";
import { DomainError } from "../lib/errors.ts";
import { log } from "../lib/log.ts";

/**
 * The bytes of a stored upload or output, checked before the response is built: Bun opens a
 * Bun.file body only after the handler has returned, so a missing file would otherwise fail outside
 * the app (a plain-text 500 that the access log records as 200). A row whose bytes are gone or of
 * another size is the operator's problem (a partial restore, a hand-deleted file): logged as an
 * error and answered 500 internal_error in the contract's shape.
 */
export function storedFile(
  request: Request,
  absolutePath: string,
  expectedSize: number,
  what: Record<string, unknown>,
): Bun.BunFile {
  let size: number | null = null;
  try {
    size = statSync(absolutePath).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (size !== expectedSize) {
    log("error", "stored file missing or damaged", {
      id: requestMeta(request)?.id,
      ...what,
      path: absolutePath,
      expected_size: expectedSize,
      actual_size: size,
    });
    throw new DomainError(
      "internal_error",
      "The stored bytes of this file are missing on the server; the operator has been alerted.",
    );
  }
  return Bun.file(absolutePath);
}
