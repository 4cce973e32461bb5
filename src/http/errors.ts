/**
 * The one error shape of the public contract:
 * {"error": {"code", "message", "type", "param"?, "details"?, "request_id"?}}.
 * Services throw ApiError; the HTTP layer renders it. Nothing else decides a status code.
 */

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "conflict_error"
  | "rate_limit_error"
  | "upstream_error"
  | "server_error";

/** Every code the service can answer with: the spec's codes plus the contract's additions. */
export const ERROR_CODES = {
  unknown_model: [400, "invalid_request_error"],
  unpriceable: [400, "invalid_request_error"],
  bad_webhook_url: [400, "invalid_request_error"],
  bad_messages: [400, "invalid_request_error"],
  use_chat_completions: [400, "invalid_request_error"],
  validation_error: [400, "invalid_request_error"],
  unknown_file: [400, "invalid_request_error"],
  unauthorized: [401, "authentication_error"],
  insufficient_balance: [402, "billing_error"],
  key_limit_reached: [402, "billing_error"],
  forbidden: [403, "authentication_error"],
  not_found: [404, "invalid_request_error"],
  method_not_allowed: [405, "invalid_request_error"],
  idempotency_conflict: [409, "conflict_error"],
  request_not_ready: [409, "conflict_error"],
  not_cancellable: [409, "conflict_error"],
  conflict: [409, "conflict_error"],
  expired: [410, "invalid_request_error"],
  payload_too_large: [413, "invalid_request_error"],
  range_not_satisfiable: [416, "invalid_request_error"],
  unsupported_media_type: [415, "invalid_request_error"],
  rate_limited: [429, "rate_limit_error"],
  too_many_in_flight: [429, "rate_limit_error"],
  download_cap: [429, "rate_limit_error"],
  internal_error: [500, "server_error"],
  submit_failed: [502, "upstream_error"],
  generation_failed: [502, "upstream_error"],
  capacity_unavailable: [503, "upstream_error"],
  not_ready: [503, "server_error"],
  insufficient_storage: [507, "server_error"],
} as const satisfies Record<string, readonly [number, ErrorType]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  /** JSON pointer-ish path of the offending field, e.g. "/input/duration" or "body.duration". */
  path: string;
  message: string;
}

export interface ApiErrorOptions {
  param?: string;
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  /** Extra top-level fields inside "error" (e.g. request_id of a failed job). */
  extra?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param?: string;
  readonly details?: ErrorDetail[];
  readonly headers: Record<string, string>;
  readonly extra?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    const [status, type] = ERROR_CODES[code];
    this.status = status;
    this.type = type;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.extra = options.extra;
  }
}

export interface ErrorBody {
  error: {
    code: string;
    message: string;
    type: ErrorType;
    param?: string;
    details?: ErrorDetail[];
    request_id?: string;
    [extra: string]: unknown;
  };
}

export function errorBody(err: ApiError, requestId?: string): ErrorBody {
  return {
    error: {
      ...err.extra,
      code: err.code,
      message: err.message,
      type: err.type,
      ...(err.param !== undefined ? { param: err.param } : {}),
      ...(err.details !== undefined ? { details: err.details } : {}),
      ...(requestId !== undefined && err.extra?.request_id === undefined ? { request_id: requestId } : {}),
    },
  };
}

export function errorResponse(
  err: ApiError,
  requestId?: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(errorBody(err, requestId)), {
    status: err.status,
    headers: { "content-type": "application/json", ...headers, ...err.headers },
  });
}
