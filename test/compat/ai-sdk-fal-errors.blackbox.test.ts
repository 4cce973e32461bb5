import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { APICallError } from "@ai-sdk/provider";
import { experimental_generateVideo, generateImage, generateSpeech } from "ai";
import { startFunded } from "../helpers/api.ts";
import { aiSdkFalFor } from "../helpers/fal.ts";

/**
 * The AI SDK's fal provider refused or failed: the SDK raises its own error (APICallError from
 * @ai-sdk/provider for a refused call, an Error with the reason for a failed video), nothing is
 * charged. Setup as in ai-sdk-fal.blackbox.test.ts.
 */
const PUBLIC = "http://gengate.test";
let s: Awaited<ReturnType<typeof startFunded>>;
let fal: ReturnType<typeof aiSdkFalFor>["fal"];
beforeAll(async () => {
  s = await startFunded("", "100", { GENGATE_PUBLIC_URL: PUBLIC });
  ({ fal } = aiSdkFalFor(s.url, PUBLIC, s.defaultKey!));
});
afterAll(() => s.cleanup());

const balance = async () =>
  ((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro;

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("the call succeeded");
}

describe("@ai-sdk/fal refused by gengate", () => {
  test("generateImage with a size below the model's minimum: APICallError 400, not retryable, nothing charged", async () => {
    const before = await balance();
    const e = await thrown(
      generateImage({ model: fal.image("sandbox/image"), prompt: "tiny", size: "32x32", maxRetries: 0 }),
    );
    expect(APICallError.isInstance(e)).toBe(true);
    const err = e as APICallError;
    expect(err.statusCode).toBe(400);
    expect(err.isRetryable).toBe(false);
    // The fal door's `message` (src/http/doors.ts) is the SDK's error message (falHttpErrorSchema).
    expect(err.message).toContain("input.width must be >= 64");
    expect(await balance()).toBe(before);
  });

  test("402: APICallError 402 naming the billing page, not retried", async () => {
    const res = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "poor", credit: "0.001" }),
    });
    const poor = aiSdkFalFor(s.url, PUBLIC, ((await res.json()) as { key: string }).key).fal;
    const e = (await thrown(
      generateImage({ model: poor.image("sandbox/image"), prompt: "p", size: "256x256" }),
    )) as APICallError;
    expect(APICallError.isInstance(e)).toBe(true);
    expect(e.statusCode).toBe(402);
    expect(e.isRetryable).toBe(false);
    expect(e.message).toContain("/console/billing");
  });

  test("generateSpeech of more seconds than the model's max: APICallError 400 naming it", async () => {
    const e = (await thrown(
      generateSpeech({
        model: fal.speech("sandbox/speech"),
        text: "long",
        providerOptions: { fal: { duration: "301s" } },
        maxRetries: 0,
      }),
    )) as APICallError;
    expect(err400(e)).toContain("input.duration must be <= 300");
  });

  test("generateVideo of a job that fails: the SDK throws, nothing charged", async () => {
    const before = await balance();
    const e = await thrown(
      experimental_generateVideo({
        model: fal.video("sandbox/video") as unknown as Parameters<
          typeof experimental_generateVideo
        >[0]["model"],
        prompt: "boom",
        duration: 1,
        providerOptions: { fal: { sandbox: { fail: true } } },
        poll: { intervalMs: 100, timeoutMs: 30_000 },
        maxRetries: 0,
      }),
    );
    expect(e).toBeInstanceOf(Error);
    expect(await balance()).toBe(before);
    const last = (await (await s.get("/v1/requests?limit=1")).json()) as { data: { status: string }[] };
    expect(last.data[0]!.status).toBe("FAILED");
  });
});

function err400(e: APICallError): string {
  expect(APICallError.isInstance(e)).toBe(true);
  expect(e.statusCode).toBe(400);
  return e.responseBody ?? "";
}
