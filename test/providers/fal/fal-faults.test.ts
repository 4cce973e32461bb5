import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createFalProvider } from "../../../src/providers/fal/index.ts";
import { ProviderError } from "../../../src/providers/types.ts";
import { type FakeJob, fakeJob, model, rejection, settings } from "./helpers.ts";
import { type Fault, type MockFal, startMockFal } from "./mock-fal.ts";

let fal: MockFal;
beforeAll(() => {
  fal = startMockFal();
});
afterAll(() => fal.stop());

const provider = (over = {}) => createFalProvider("fal", settings(fal.url, fal.key, over));

/**
 * Runs a job on `modelId` and returns its ProviderError; the key must appear nowhere. Its message is
 * ours alone: fal's words and status are the error's detail and status, for the server's log.
 */
async function failure(modelId: string, job: FakeJob = fakeJob(model(modelId)), over = {}) {
  const err = await rejection(provider(over).run(job));
  expect(err).toBeInstanceOf(ProviderError);
  expect(err.message).not.toContain(fal.key);
  expect((err as ProviderError).detail ?? "").not.toContain(fal.key);
  for (const line of job.logs) expect(line).not.toContain(fal.key);
  return { err: err as ProviderError, job };
}

describe("fal provider: submit faults", () => {
  test("429 with Retry-After -> capacity with the delay; nothing recorded", async () => {
    fal.on("test/submit-429", { submit: [{ status: 429, retryAfter: 7 }] });
    const { err, job } = await failure("test/submit-429");
    expect(err.kind).toBe("capacity");
    expect(err.retryAfterMs).toBe(7000);
    expect(err.message).toBe("fal is busy; nothing was submitted.");
    expect(err.status).toBe(429);
    expect(job.upstreamIds).toEqual([]);
    expect(fal.callsTo("status", "test/submit-429")).toHaveLength(0);
  });

  test("503 -> capacity", async () => {
    fal.on("test/submit-503", { submit: [{ status: 503 }] });
    const { err, job } = await failure("test/submit-503");
    expect(err.kind).toBe("capacity");
    expect(err.status).toBe(503);
    expect(job.upstreamIds).toEqual([]);
  });

  test("after a clean 429 a retry submits normally", async () => {
    fal.on("test/submit-429-once", { submit: [{ status: 429 }] });
    expect((await failure("test/submit-429-once")).err.kind).toBe("capacity");
    const result = await provider().run(fakeJob(model("test/submit-429-once")));
    expect(result.outputs).toHaveLength(1);
    expect(fal.callsTo("submit", "test/submit-429-once")).toHaveLength(2);
  });

  test("500 -> failed, fal's detail kept for the log", async () => {
    fal.on("test/submit-500", { submit: [{ status: 500, detail: "Internal worker error" }] });
    const { err } = await failure("test/submit-500");
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("fal failed to accept the job.");
    expect(err).toMatchObject({ status: 500, detail: "Internal worker error" });
  });

  test("422 validation errors -> input, the field and fal's message kept for the log", async () => {
    fal.on("test/submit-422", {
      submit: [
        { status: 422, detail: [{ loc: ["body", "prompt"], msg: "field required", type: "missing" }] },
      ],
    });
    const { err } = await failure("test/submit-422");
    expect(err.kind).toBe("input");
    expect(err.message).toBe("fal refused the job's input.");
    expect(err).toMatchObject({ status: 422, detail: "prompt: field required" });
  });

  test("malformed JSON reply -> failed", async () => {
    fal.on("test/submit-malformed", { submit: ["malformed"] });
    const { err, job } = await failure("test/submit-malformed");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("malformed submit reply");
    expect(job.upstreamIds).toEqual([]);
  });

  test("a reply without request_id -> failed", async () => {
    fal.on("test/submit-no-id", { noRequestId: true });
    const { err, job } = await failure("test/submit-no-id");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("request_id");
    expect(job.upstreamIds).toEqual([]);
    expect(fal.callsTo("status", "test/submit-no-id")).toHaveLength(0);
  });

  test("connection dropped after sending -> failed (unknown outcome, never resubmitted), not capacity", async () => {
    fal.on("test/submit-drop", { submit: ["drop"] });
    const { err, job } = await failure("test/submit-drop");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("lost the connection");
    expect(err.message).toContain("not sent again");
    expect(fal.callsTo("submit", "test/submit-drop")).toHaveLength(1);
    expect(job.upstreamIds).toEqual([]);
  });

  test("a submit timeout -> failed (unknown outcome)", async () => {
    fal.on("test/submit-slow", { submit: [{ delayMs: 400 }] });
    const { err } = await failure("test/submit-slow", undefined, { timeoutMs: 100 });
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("timed out");
    expect(fal.callsTo("submit", "test/submit-slow")).toHaveLength(1);
  });

  test("502 from a gateway on submit -> failed (fal may have queued it)", async () => {
    fal.on("test/submit-502", { submit: [{ status: 502 }] });
    const { err } = await failure("test/submit-502");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("fal may have queued the job");
    expect(err.status).toBe(502);
  });

  test("connection refused (nothing sent) -> capacity", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const url = closed.url.origin;
    closed.stop(true);
    const job = fakeJob(model("test/refused"));
    const err = await rejection(createFalProvider("fal", settings(url, fal.key)).run(job));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("capacity");
    expect(err.message).toContain("nothing was submitted");
    expect(job.upstreamIds).toEqual([]);
  });

  test("a wrong key -> 401 -> failed, and the key fal echoed back is redacted", async () => {
    const wrong = "sk-wrong-SECRET-0123456789";
    fal.on("test/auth", {});
    const job = fakeJob(model("test/auth"));
    const err = (await rejection(
      createFalProvider("fal", settings(fal.url, wrong)).run(job),
    )) as ProviderError;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("fal refused the gateway's API key.");
    expect(err.status).toBe(401);
    expect(err.detail).toContain("[redacted]");
    expect(err.message).not.toContain(wrong);
    expect(err.detail).not.toContain(wrong);
    expect(fal.callsTo("submit", "test/auth").at(-1)!.authorization).toBe(`Key ${wrong}`);
  });

  test("no key configured: no Authorization header is sent", async () => {
    fal.on("test/no-key", {});
    const err = await rejection(
      createFalProvider("fal", settings(fal.url, null)).run(fakeJob(model("test/no-key"))),
    );
    expect(err.kind).toBe("failed");
    expect(fal.callsTo("submit", "test/no-key")[0]!.authorization).toBeNull();
  });
});

describe("fal provider: polling faults", () => {
  const transient: [string, Fault[]][] = [
    ["429", [{ status: 429 }, { status: 429 }]],
    ["503", [{ status: 503 }]],
    ["502 and 504", [{ status: 502 }, { status: 504 }]],
    // Bun's fetch silently retries a GET once when a reused keep-alive socket drops: two drops reach us.
    ["a dropped connection", ["drop", "drop"]],
  ];
  for (const [name, faults] of transient) {
    test(`${name} on status: keeps polling with back-off and completes`, async () => {
      const id = `test/status-busy-${name.replace(/\W+/g, "-")}`;
      fal.on(id, { status: faults });
      const job = fakeJob(model(id));
      const t = performance.now();
      const result = await provider().run(job);
      expect(result.outputs).toHaveLength(1);
      expect(fal.callsTo("status", id)).toHaveLength(faults.length + 3);
      expect(fal.callsTo("submit", id)).toHaveLength(1);
      expect(job.logs.some((l) => l.startsWith("fal: status check:") && l.includes("Retrying in"))).toBe(
        true,
      );
      // back-off doubles from the poll interval: 40 ms then 80 ms
      if (name === "429") expect(performance.now() - t).toBeGreaterThan(40 + 80);
    });
  }

  test("a long 503 outage does not fail the job: it polls until the signal aborts", async () => {
    fal.on("test/status-outage", { status: Array.from({ length: 1000 }, () => ({ status: 503 })) });
    const job = fakeJob(model("test/status-outage"));
    const run = provider({ pollIntervalMs: 5 }).run(job);
    await Bun.sleep(250);
    job.controller.abort(new Error("deadline"));
    const err = await rejection(run);
    expect(err.message).toBe("deadline");
    expect(fal.callsTo("status", "test/status-outage").length).toBeGreaterThan(3);
  });

  test("the upstream loses the job (404 on status) -> failed", async () => {
    fal.on("test/status-lost", { lose: true });
    const { err, job } = await failure("test/status-lost");
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^fal lost track of request [0-9a-f-]+\.$/);
    expect(err).toMatchObject({ status: 404, detail: "Request not found" });
    expect(job.upstreamIds).toHaveLength(1);
  });

  test("500 on status -> failed", async () => {
    fal.on("test/status-500", { status: [{ status: 500, detail: "db down" }] });
    const { err } = await failure("test/status-500");
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^Checking fal request [0-9a-f-]+ failed: The upstream failed the call\.$/);
    expect(err).toMatchObject({ status: 500, detail: "db down" });
  });

  test("malformed JSON on status -> failed", async () => {
    fal.on("test/status-malformed", { status: ["malformed"] });
    const { err } = await failure("test/status-malformed");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("malformed");
  });

  test("an unknown status -> failed with a clear message", async () => {
    fal.on("test/status-weird", { weirdStatus: "EXPLODED" });
    const { err } = await failure("test/status-weird");
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^fal sent an unknown status for request [0-9a-f-]+\.$/);
    expect(err.detail).toBe('status "EXPLODED"');
  });

  test("an error body echoing the key is redacted", async () => {
    fal.on("test/status-echo", { status: [{ status: 500, detail: `bad header Key ${fal.key}` }] });
    const { err } = await failure("test/status-echo");
    expect(err.detail).toBe("bad header Key [redacted]");
  });

  test("upstream log lines are redacted too", async () => {
    fal.on("test/log-echo", { logs: [`using token ${fal.key}`] });
    const job = fakeJob(model("test/log-echo"));
    await provider().run(job);
    expect(job.logs).toContain("fal: using token [redacted]");
    for (const line of job.logs) expect(line).not.toContain(fal.key);
  });
});

describe("fal provider: result faults", () => {
  test("a failed job (COMPLETED, result answers an error) -> failed, fal's detail kept for the log", async () => {
    fal.on("test/job-failed", { fail: { status: 500, detail: "CUDA out of memory" } });
    const { err } = await failure("test/job-failed");
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^fal reports request [0-9a-f-]+ failed: The upstream failed the call\.$/);
    expect(err).toMatchObject({ status: 500, detail: "CUDA out of memory" });
  });

  test("a failed job answered with 422 is still 'failed' (the job ran), not 'input'", async () => {
    fal.on("test/job-failed-422", { fail: { status: 422, detail: "Content policy violation" } });
    const { err } = await failure("test/job-failed-422");
    expect(err.kind).toBe("failed");
    expect(err.detail).toBe("Content policy violation");
  });

  test("a COMPLETED status carrying `error` -> failed with it, without reading the result", async () => {
    fal.on("test/status-error", { statusError: "Runner crashed" });
    const { err } = await failure("test/status-error");
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^fal reports request [0-9a-f-]+ failed \(runner_error\)\.$/);
    expect(err.detail).toBe("Runner crashed");
    expect(fal.callsTo("result", "test/status-error")).toHaveLength(0);
  });

  test("a result without the expected media -> failed, naming what was missing", async () => {
    fal.on("test/result-empty", { result: { seed: 3 } });
    const { err } = await failure("test/result-empty");
    expect(err.kind).toBe("failed");
    expect(err.message).toBe('fal returned a result without "images" or "image".');
  });

  test("a video model receiving an image-shaped result -> failed", async () => {
    fal.on("test/result-wrong-kind", { result: { images: [{ url: "https://x/1.png" }] } });
    const { err } = await failure(
      "test/result-wrong-kind",
      fakeJob(model("test/result-wrong-kind", "video")),
    );
    expect(err.message).toBe('fal returned a result without "video".');
  });

  test("a media entry without a URL -> failed", async () => {
    fal.on("test/result-no-url", { result: { images: [{ width: 3 }] } });
    const { err } = await failure("test/result-no-url");
    expect(err.message).toBe("fal returned image output #1 without a URL.");
  });

  test("malformed JSON result -> failed", async () => {
    fal.on("test/result-malformed", { resultFaults: ["malformed"] });
    const { err } = await failure("test/result-malformed");
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("malformed");
  });

  test("429 then 503 on the result read: retried, then returned", async () => {
    fal.on("test/result-busy", { resultFaults: [{ status: 429 }, { status: 503 }] });
    const result = await provider().run(fakeJob(model("test/result-busy")));
    expect(result.outputs).toHaveLength(1);
    expect(fal.callsTo("result", "test/result-busy")).toHaveLength(3);
  });

  test("a data: URL output (sync mode) is decoded to bytes", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    fal.on("test/result-data-url", {
      result: { images: [{ url: `data:image/png;base64,${png.toString("base64")}`, width: 1, height: 1 }] },
    });
    const result = await provider().run(fakeJob(model("test/result-data-url")));
    const out = result.outputs[0]!;
    expect(out.url).toBeUndefined();
    expect(out.contentType).toBe("image/png");
    expect(Buffer.from(out.bytes!).equals(png)).toBe(true);
  });
});
