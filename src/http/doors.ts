/**
 * The doors: each client library people already have (docs/clients.md) reads errors in its own
 * shape, so a refused call raises that client's own typed error. The status is always the
 * contract's (errors.ts decides it); only the body's shape changes, and gengate's `code` is inside
 * every shape. The app's error handler picks the door from the path, so an error thrown before a
 * handler runs (a body too large, a schema refusal, a missing key) is in the door's shape too.
 *
 * - `gengate`: the contract's `{"error": {code, message, type, ...}}`, which is also OpenAI's shape
 *   (openai/src/core/error.ts reads `error.message`, `error.code`, `error.type`, `error.param`),
 *   so the OpenAI doors answer it unchanged.
 * - `anthropic`: `{"type": "error", "error": {"type", "message"}, "request_id"}` (Anthropic's API
 *   errors page; @anthropic-ai/sdk/src/core/error.ts builds its APIError from that body).
 * - `replicate`: a problem detail, `{"title", "detail", "status"}` (Replicate's HTTP API answers
 *   errors so; replicate-javascript lib/error.js puts the body text in ApiError's message).
 *
 * - `fal` (`/v1/queue/...`, `/v1/run/...`: the native queue, which is fal's, and fal.stream's
 *   `{model}/stream`): the native body with fal's `detail` and `error_type` beside it (fal_client
 *   shows `detail`), and `message`, which @fal-ai/client makes its ApiError's message
 *   (@fal-ai/client/src/response.js, defaultResponseHandler: `body.message || statusText`) and the
 *   AI SDK's fal provider its error's (@ai-sdk/fal/src/fal-image-model.ts, falHttpErrorSchema).
 *   The native `error` object is unchanged, so native clients read what they always read.
 *
 * fal's other alias routes answer fal's shape from their own handlers (fal-errors.ts), because
 * what fal's clients retry depends on the job, not only on the error.
 */
import type { DomainError } from "../lib/errors.ts";
import { errorBody, errorHeaders, errorResponse, httpStatus } from "./errors.ts";

export type Door = "gengate" | "anthropic" | "replicate" | "fal";

/** Which door a path belongs to; a door's routes add their pattern here. */
const DOOR_PATHS: ReadonlyArray<readonly [RegExp, Door]> = [
  [/^\/v1\/messages(\/|$)/, "anthropic"],
  [/^\/v1\/predictions(\/|$)/, "replicate"],
  [/^\/v1\/models\/[^/]+\/[^/]+\/predictions\/?$/, "replicate"],
  [/^\/v1\/webhooks\/default\/secret\/?$/, "replicate"],
  // fal's paths: the queue and run doors (fal.run, queue.fal.run) and fal.stream's {model}/stream.
  [/^\/v1\/(queue|run)\//, "fal"],
];

export function doorOf(path: string): Door {
  for (const [pattern, door] of DOOR_PATHS) if (pattern.test(path)) return door;
  return "gengate";
}

/**
 * Anthropic's error types by status (docs.anthropic.com "Errors": 400 invalid_request_error, 401
 * authentication_error, 402 billing_error, 403 permission_error, 404 not_found_error, 413
 * request_too_large, 429 rate_limit_error, 500 api_error, 529 overloaded_error). Codes Anthropic
 * has no status for keep the contract's status and take the nearest type.
 */
function anthropicType(status: number): string {
  switch (status) {
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/** An error's body in a door's shape (the native shape for `gengate`), with gengate's code inside. */
export function doorErrorBody(door: Door, err: DomainError, requestId?: string): Record<string, unknown> {
  const native = errorBody(err, requestId).error;
  const status = httpStatus(err.code);
  switch (door) {
    case "gengate":
      return { error: native };
    case "anthropic": {
      const { type: _nativeType, request_id, ...rest } = native;
      return {
        type: "error",
        error: { ...rest, type: anthropicType(status), message: err.message },
        ...(request_id !== undefined ? { request_id } : {}),
      };
    }
    case "fal":
      return { detail: err.message, error_type: err.code, message: err.message, error: native };
    case "replicate": {
      const { message: _message, type: _type, ...rest } = native;
      return { ...rest, title: TITLES[status] ?? "Error", detail: err.message, status };
    }
  }
}

const TITLES: Record<number, string> = {
  400: "Invalid input",
  401: "Unauthenticated",
  402: "Insufficient credit",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  410: "Gone",
  413: "Request too large",
  415: "Unsupported media type",
  416: "Range not satisfiable",
  429: "Too many requests",
  500: "Internal server error",
  502: "Upstream error",
  503: "Service unavailable",
  507: "Insufficient storage",
};

/** An error as a door answers it: the contract's status and headers, the door's body. */
export function doorErrorResponse(
  door: Door,
  err: DomainError,
  requestId?: string,
  headers: Record<string, string> = {},
): Response {
  if (door === "gengate") return errorResponse(err, requestId, headers);
  const body = doorErrorBody(door, err, requestId);
  return new Response(JSON.stringify(body), {
    status: httpStatus(err.code),
    headers: {
      "content-type": door === "replicate" ? "application/problem+json" : "application/json",
      ...headers,
      ...(door === "anthropic" ? anthropicHeaders(httpStatus(err.code), body.request_id) : {}),
      ...errorHeaders(err),
    },
  });
}

/**
 * Anthropic's SDKs retry 408, 409, 429 and 5xx unless told `x-should-retry: false`
 * (@anthropic-ai/sdk/src/client.ts shouldRetry; the Python SDK's _should_retry alike), twice by
 * default. A 4xx other than 408 and 429 answers the same however often it is sent (a 409 is an
 * Idempotency-Key reused with another body or still running, a 402 needs a top-up), so it is not
 * retried. `request-id` is what the SDK shows as the error's requestID: the job's id once a job was
 * opened, else the HTTP request's.
 */
function anthropicHeaders(status: number, requestId: unknown): Record<string, string> {
  return {
    ...(status < 500 && status !== 408 && status !== 429 ? { "x-should-retry": "false" } : {}),
    ...(typeof requestId === "string" ? { "request-id": requestId } : {}),
  };
}
