/**
 * The one error every service throws: a code of the public API (docs/api.md "Errors": the service's
 * codes and gengate's additions), one sentence for a person, and the facts a caller needs to act on it
 * (the field at fault, when to retry, the rate-limit window). It knows nothing of HTTP: the HTTP
 * layer alone (src/http/errors.ts) turns a code into a status and a type, and these facts into
 * headers (Retry-After, RateLimit, Content-Range), in one place.
 */

/** Every code the service can answer with. */
export const ERROR_CODE_NAMES = [
  "unknown_model",
  "unpriceable",
  "bad_webhook_url",
  "bad_messages",
  "use_chat_completions",
  "validation_error",
  "unknown_file",
  "invalid_code",
  "currency_mismatch",
  "unauthorized",
  "insufficient_balance",
  "key_limit_reached",
  "forbidden",
  "model_not_allowed",
  "address_not_allowed",
  "not_found",
  "method_not_allowed",
  "idempotency_conflict",
  "request_not_ready",
  "not_cancellable",
  "conflict",
  "expired",
  "payload_too_large",
  "range_not_satisfiable",
  "unsupported_media_type",
  "rate_limited",
  "too_many_in_flight",
  "download_cap",
  "internal_error",
  "submit_failed",
  "generation_failed",
  "payment_provider_error",
  "capacity_unavailable",
  "insufficient_storage",
] as const;

export type ErrorCode = (typeof ERROR_CODE_NAMES)[number];

export interface ErrorDetail {
  /** JSON pointer-ish path of the offending field, e.g. "/input/duration" or "body.duration". */
  path: string;
  message: string;
}

/** A write-rate window (IETF RateLimit draft): its name, quota, length, what is left, when it resets. */
export interface RateLimitState {
  policy: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

export interface DomainErrorOptions {
  param?: string;
  details?: ErrorDetail[];
  /** When the same call may succeed again, in whole seconds (Retry-After). */
  retryAfterSeconds?: number;
  /** The write-rate window that refused the call (rate_limited). */
  rateLimit?: RateLimitState;
  /** The size of a file a byte range did not fit (range_not_satisfiable). */
  rangeOf?: number;
  /** Extra top-level fields inside "error" (e.g. request_id of a failed job). */
  extra?: Record<string, unknown>;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param?: string;
  readonly details?: ErrorDetail[];
  readonly retryAfterSeconds?: number;
  readonly rateLimit?: RateLimitState;
  readonly rangeOf?: number;
  readonly extra?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.param = options.param;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.rateLimit = options.rateLimit;
    this.rangeOf = options.rangeOf;
    this.extra = options.extra;
  }
}
