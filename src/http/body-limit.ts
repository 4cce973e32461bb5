import { readAllCapped } from "../lib/read-capped.ts";
import { ApiError } from "./errors.ts";

/** JSON bodies larger than this are refused (413) whatever their transfer encoding. */
export const JSON_BODY_MAX = 4 * 1024 * 1024;

/**
 * Reads a request body up to `max` bytes. Bun's own maxRequestBodySize answers a bare 413 with no
 * body before any handler runs, so limits are enforced here instead, with the contract's error.
 */
export async function readCapped(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw tooLarge(max);
  return readAllCapped(request.body, max, () => tooLarge(max));
}

export function tooLarge(max: number): ApiError {
  return new ApiError("payload_too_large", `The body is larger than the limit of ${max} bytes.`);
}

/** Parses a JSON body read with the cap; malformed JSON is 400 validation_error. */
export async function parseJsonCapped(request: Request): Promise<unknown> {
  const bytes = await readCapped(request, JSON_BODY_MAX);
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("validation_error", "The request body is not valid JSON.");
  }
}
