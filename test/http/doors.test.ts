import { describe, expect, test } from "bun:test";
import { doorErrorBody, doorErrorResponse, doorOf } from "../../src/http/doors.ts";
import { DomainError } from "../../src/lib/errors.ts";

describe("doors: each client's error shape, gengate's code and status inside", () => {
  test("paths pick their door", () => {
    expect(doorOf("/v1/messages")).toBe("anthropic");
    expect(doorOf("/v1/messages/count_tokens")).toBe("anthropic");
    expect(doorOf("/v1/predictions")).toBe("replicate");
    expect(doorOf("/v1/predictions/abc/cancel")).toBe("replicate");
    expect(doorOf("/v1/models/acme/video-x/predictions")).toBe("replicate");
    // The catalog's own model routes and every other path stay on the contract's shape.
    expect(doorOf("/v1/models")).toBe("gengate");
    expect(doorOf("/v1/models/acme/video-x")).toBe("gengate");
    expect(doorOf("/v1/messagesx")).toBe("gengate");
    expect(doorOf("/v1/chat/completions")).toBe("gengate");
  });

  test("Anthropic: type error, error.type by status, the code and billing link kept", async () => {
    const err = new DomainError(
      "insufficient_balance",
      "Balance too low. Top up at https://x/console/billing.",
      {
        extra: { billing_url: "https://x/console/billing" },
      },
    );
    const res = doorErrorResponse("anthropic", err, "req_1");
    expect(res.status).toBe(402);
    const body = (await res.json()) as Record<string, any>;
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("billing_error");
    expect(body.error.code).toBe("insufficient_balance");
    expect(body.error.billing_url).toBe("https://x/console/billing");
    expect(body.request_id).toBe("req_1");
    expect(doorErrorBody("anthropic", new DomainError("unauthorized", "no")).error).toMatchObject({
      type: "authentication_error",
    });
    expect(doorErrorBody("anthropic", new DomainError("capacity_unavailable", "busy")).error).toMatchObject({
      type: "overloaded_error",
    });
  });

  test("Replicate: a problem detail with title, detail, status and the code", async () => {
    const res = doorErrorResponse("replicate", new DomainError("not_found", "No such prediction."), "req_2");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual({
      code: "not_found",
      request_id: "req_2",
      title: "Not found",
      detail: "No such prediction.",
      status: 404,
    });
  });

  test("gengate (and OpenAI) keep the contract's body and the Retry-After header", async () => {
    const err = new DomainError("too_many_in_flight", "wait", { retryAfterSeconds: 1 });
    for (const door of ["gengate", "anthropic", "replicate"] as const) {
      const res = doorErrorResponse(door, err);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
    }
    expect(doorErrorBody("gengate", err)).toEqual({
      error: { code: "too_many_in_flight", message: "wait", type: "rate_limit_error" },
    });
  });
});
