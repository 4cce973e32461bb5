/**
 * The contract's error table and body, below every layer: each code's HTTP status and error type
 * (`ERROR_CODES`), and the JSON body `{"error": {code, message, type, ...}}` of a DomainError. They
 * live in src/lib/ because a service that renders a wire format writes that body too (the chat
 * stream's error event, src/chat/wire.ts); only the HTTP kit (src/http/errors.ts) reads the status
 * and turns an error into a response and its headers.
 */
import type { DomainError, ErrorCode, ErrorDetail } from "./errors.ts";

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "conflict_error"
  | "rate_limit_error"
  | "upstream_error"
  | "server_error";

/** Each code's HTTP status and error type: the only place a status is decided. */
export const ERROR_CODES = {
  unknown_model: [400, "invalid_request_error"],
  unpriceable: [400, "invalid_request_error"],
  bad_webhook_url: [400, "invalid_request_error"],
  bad_messages: [400, "invalid_request_error"],
  use_chat_completions: [400, "invalid_request_error"],
  validation_error: [400, "invalid_request_error"],
  unknown_file: [400, "invalid_request_error"],
  invalid_code: [400, "invalid_request_error"],
  currency_mismatch: [400, "invalid_request_error"],
  unauthorized: [401, "authentication_error"],
  insufficient_balance: [402, "billing_error"],
  key_limit_reached: [402, "billing_error"],
  forbidden: [403, "authentication_error"],
  model_not_allowed: [403, "authentication_error"],
  address_not_allowed: [403, "authentication_error"],
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
  payment_provider_error: [502, "upstream_error"],
  capacity_unavailable: [503, "upstream_error"],
  insufficient_storage: [507, "server_error"],
} as const satisfies Record<ErrorCode, readonly [number, ErrorType]>;

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

export function errorBody(err: DomainError, requestId?: string): ErrorBody {
  return {
    error: {
      ...err.extra,
      code: err.code,
      message: err.message,
      type: ERROR_CODES[err.code][1],
      ...(err.param !== undefined ? { param: err.param } : {}),
      ...(err.details !== undefined ? { details: err.details } : {}),
      ...(requestId !== undefined && err.extra?.request_id === undefined ? { request_id: requestId } : {}),
    },
  };
}
