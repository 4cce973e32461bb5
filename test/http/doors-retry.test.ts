import { describe, expect, test } from "bun:test";
import { doorErrorResponse } from "../../src/http/doors.ts";
import { DomainError, type ErrorCode } from "../../src/lib/errors.ts";

/**
 * Anthropic's SDKs retry 408, 409, 429 and 5xx unless told `x-should-retry: false`
 * (anthropic-sdk-typescript src/client.ts shouldRetry): the door says so where sending again
 * answers the same, and only there.
 */
describe("the Anthropic door's retry advice", () => {
  const advice = (code: ErrorCode, door: "anthropic" | "gengate" = "anthropic") =>
    doorErrorResponse(door, new DomainError(code, "x")).headers.get("x-should-retry");

  test("a 4xx that answers the same is not retried: 400, 401, 402, 404, 409, 413", () => {
    for (const code of [
      "validation_error",
      "unauthorized",
      "insufficient_balance",
      "key_limit_reached",
      "not_found",
      "idempotency_conflict",
      "payload_too_large",
    ] as const)
      expect(advice(code)).toBe("false");
  });

  test("429 and 5xx keep the SDK's own policy (Retry-After where gengate knows when)", () => {
    for (const code of [
      "rate_limited",
      "too_many_in_flight",
      "submit_failed",
      "capacity_unavailable",
      "internal_error",
    ] as const)
      expect(advice(code)).toBeNull();
  });

  test("other doors are untouched", () => {
    expect(advice("idempotency_conflict", "gengate")).toBeNull();
  });

  test("request-id is the body's request id: the job's once one was opened", () => {
    const failed = new DomainError("submit_failed", "x", { extra: { request_id: "job-1" } });
    expect(doorErrorResponse("anthropic", failed, "http-1").headers.get("request-id")).toBe("job-1");
    expect(
      doorErrorResponse("anthropic", new DomainError("unauthorized", "x"), "http-2").headers.get(
        "request-id",
      ),
    ).toBe("http-2");
  });
});
