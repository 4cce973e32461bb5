import { DomainError } from "../lib/errors.ts";
import { readAllCapped, tooLarge } from "../lib/read-capped.ts";

/** JSON bodies larger than this are refused (413) whatever their transfer encoding. */
export const JSON_BODY_MAX = 4 * 1024 * 1024;

/**
 * Console form bodies (urlencoded or multipart) larger than this are refused (413) before they are
 * read, whatever their transfer encoding. The largest form a page sends is the studio chat's
 * conversation: at most 256 Ki characters of JSON, about 2.3 MB once urlencoded (up to 9 bytes a
 * character). Unbounded, a 128 MiB sign-in form took the server from 74 to 900 MiB of RSS.
 */
export const FORM_BODY_MAX = 4 * 1024 * 1024;

/**
 * Deepest nesting of arrays and objects a client JSON body may have. Real inputs need a handful of
 * levels; every recursive step after parsing (schema checks, error messages, canonical JSON,
 * stringify) then stays bounded, and validation linear in the body's size.
 */
export const JSON_MAX_DEPTH = 64;

/**
 * Reads a request body up to `max` bytes. Bun's own maxRequestBodySize answers a bare 413 with no
 * body before any handler runs, so limits are enforced here instead, with the contract's error.
 */
export async function readCapped(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw tooLarge(max);
  // A declared length within the cap bounds the body (HTTP/1.1 framing): read it in one native call.
  // The stream reader's promise per chunk was 5-10% of a submit's CPU (bun --cpu-prof).
  if (declared !== null && request.headers.get("transfer-encoding") === null) {
    return new Uint8Array(await request.arrayBuffer());
  }
  return readAllCapped(request.body, max, () => tooLarge(max));
}

/** Whether a request's body is a multipart form (its Content-Type, parameters aside). */
export function isMultipartForm(request: Request): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(request.headers.get("content-type") ?? "");
}

/** A parsed multipart form, as Bun's Response.formData() gives it. */
export type ParsedForm = Awaited<ReturnType<Response["formData"]>>;

/**
 * A multipart/form-data body read with the cap (readCapped: Content-Length first, then counted
 * while streaming; never request.formData() on the live body, which buffers whatever the client
 * sends), then parsed. A body that is not a readable form is 400 validation_error.
 */
export async function readCappedForm(request: Request, max: number): Promise<ParsedForm> {
  const type = request.headers.get("content-type") ?? "";
  const bytes = await readCapped(request, max);
  try {
    return await new Response(bytes, { headers: { "content-type": type } }).formData();
  } catch {
    throw new DomainError("validation_error", "The multipart body could not be read.");
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * One linear pass over UTF-8 JSON text counting bracket depth outside strings; throws 400
 * validation_error past `maxDepth`. Runs before JSON.parse, so no recursive work ever sees a deep
 * body. Multi-byte UTF-8 sequences never contain ASCII bytes, so scanning bytes is exact. The
 * scan does not judge well-formedness: JSON.parse does that next.
 */
export function checkJsonDepth(bytes: Uint8Array, maxDepth = JSON_MAX_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > maxDepth) {
        throw new DomainError(
          "validation_error",
          `The JSON body is nested deeper than the limit of ${maxDepth} levels.`,
        );
      }
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
    }
  }
}

/**
 * Keys a client object may not have: `__proto__` (prototype pollution once merged) and the two
 * methods JavaScript calls to turn an object into a string (`{"toString": 1}` makes every
 * `${value}` throw, inside libraries' error formatting too).
 */
const FORBIDDEN_KEYS = ["__proto__", "toString", "valueOf"] as const;

/** One pass over the parsed value (depth already bounded): throws 400 on a forbidden key. */
function checkKeys(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (const v of value) if (typeof v === "object" && v !== null) stack.push(v);
      continue;
    }
    for (const key of FORBIDDEN_KEYS) if (Object.hasOwn(value, key)) throw forbiddenKey(root, key);
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (typeof v === "object" && v !== null) stack.push(v);
    }
  }
}

/** The error for a forbidden key, naming where it is (found again: only on this rare path). */
function forbiddenKey(root: unknown, key: string): DomainError {
  const find = (value: unknown, path: string): string | null => {
    if (typeof value !== "object" || value === null) return null;
    if (!Array.isArray(value) && Object.hasOwn(value, key)) return path;
    for (const [k, v] of Object.entries(value)) {
      const found = find(v, `${path}.${k}`);
      if (found) return found;
    }
    return null;
  };
  const at = find(root, "body") ?? "body";
  return new DomainError("validation_error", `The key "${key}" is not allowed in a JSON body (in ${at}).`, {
    param: `${at}.${key}`,
  });
}

/**
 * Client JSON (already size-capped) to a value: nesting checked before parsing, malformed JSON and
 * forbidden keys are 400 validation_error. Every client JSON body goes through here.
 */
export function parseClientJson(bytes: Uint8Array): unknown {
  checkJsonDepth(bytes);
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError("validation_error", "The request body is not valid JSON.");
  }
  checkKeys(value);
  return value;
}

/**
 * Parses a JSON body read with the cap (413 past JSON_BODY_MAX), refusing nesting deeper than
 * JSON_MAX_DEPTH (400) before parsing; malformed JSON is 400 validation_error.
 */
export async function parseJsonCapped(request: Request): Promise<unknown> {
  return parseClientJson(await readCapped(request, JSON_BODY_MAX));
}
