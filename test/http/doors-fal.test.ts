import { describe, expect, test } from "bun:test";
import { doorErrorBody, doorErrorResponse, doorOf } from "../../src/http/doors.ts";
import { DomainError } from "../../src/lib/errors.ts";

describe("the fal door: fal's fields beside the contract's error", () => {
  test("the queue and run paths, and fal.stream's, are fal's; the native reads are not", () => {
    for (const path of [
      "/v1/queue/sandbox/image",
      "/v1/run/sandbox/image",
      "/v1/run/sandbox/image/stream",
      "/v1/run/acme/video/pro/stream",
      "/v1/queue/sandbox/image/requests/abc/status",
    ]) {
      expect(doorOf(path)).toBe("fal");
    }
    for (const path of [
      "/v1/requests",
      "/v1/requests/abc/status",
      "/v1/estimate",
      "/v1/queued",
      "/v1/runs",
    ]) {
      expect(doorOf(path)).toBe("gengate");
    }
  });

  test("a 402: detail and message name the billing page, error_type is the code, the native error is whole", async () => {
    const err = new DomainError(
      "insufficient_balance",
      "Balance too low. Top up at https://x/console/billing.",
      {
        extra: { billing_url: "https://x/console/billing" },
      },
    );
    const res = doorErrorResponse("fal", err, "req_1");
    expect(res.status).toBe(402);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.detail).toBe(err.message);
    expect(body.message).toBe(err.message);
    expect(body.error_type).toBe("insufficient_balance");
    expect(body.error).toEqual(doorErrorBody("gengate", err, "req_1").error);
  });
});
