/**
 * The one error shape of the public contract, as HTTP answers it:
 * {"error": {"code", "message", "type", "param"?, "details"?, "request_id"?}}.
 * Services throw DomainError (src/lib/errors.ts) with a contract code; the code's status and type
 * are one table (`ERROR_CODES`) with the body (`errorBody`) in src/lib/error-body.ts, re-exported
 * here, so a service rendering a wire format (the chat stream's error event) needs no HTTP module.
 * This module alone reads the status and maps the error's facts to headers (Retry-After,
 * RateLimit, Content-Range). Nothing else decides a status code.
 */
import { ERROR_CODES, errorBody } from "../lib/error-body.ts";
import type { DomainError, ErrorCode, RateLimitState } from "../lib/errors.ts";

export { ERROR_CODES, type ErrorBody, type ErrorType, errorBody } from "../lib/error-body.ts";

/** The HTTP status of a code. */
export function httpStatus(code: ErrorCode): number {
  return ERROR_CODES[code][0];
}

/** RateLimit-Policy and RateLimit headers (IETF draft, structured fields) of a write window. */
export function rateLimitHeaders(w: RateLimitState): Record<string, string> {
  return {
    "ratelimit-policy": `"${w.policy}";q=${w.limit};w=${w.windowSeconds}`,
    ratelimit: `"${w.policy}";r=${w.remaining};t=${w.resetSeconds}`,
  };
}

/** The headers an error's facts call for: Retry-After, RateLimit, Content-Range. */
export function errorHeaders(err: DomainError): Record<string, string> {
  const h: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined)
    h["retry-after"] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
  if (err.rateLimit) Object.assign(h, rateLimitHeaders(err.rateLimit));
  if (err.rangeOf !== undefined) h["content-range"] = `bytes */${err.rangeOf}`;
  return h;
}

export function errorResponse(
  err: DomainError,
  requestId?: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(errorBody(err, requestId)), {
    status: httpStatus(err.code),
    headers: { "content-type": "application/json", ...headers, ...errorHeaders(err) },
  });
}
