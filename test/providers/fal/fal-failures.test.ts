import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createFalProvider } from "../../../src/providers/fal/index.ts";
import { DETAIL_MAX_CHARS, ProviderError } from "../../../src/providers/types.ts";
import { type FakeJob, fakeJob, model, rejection, settings } from "./helpers.ts";
import { type MockFal, startMockFal } from "./mock-fal.ts";

/**
 * How fal reports that a request failed (mock-fal.ts cites the sources): the stored result answers
 * the status the request ended with, 503/504 included, with {detail, error_type} and
 * X-Fal-Error-Type; some queues answer a FAILED or CANCELED status. Each is final at once.
 */
let fal: MockFal;
beforeAll(() => {
  fal = startMockFal();
});
afterAll(() => fal.stop());

const provider = () => createFalProvider("fal", settings(fal.url, fal.key));

/**
 * Runs the job and returns its ProviderError. Liveness bound: a stored error taken for "busy" would
 * be re-read until the job's time limit, which the abort after 10 s stands in for.
 */
async function failure(job: FakeJob) {
  const limit = setTimeout(() => job.controller.abort(new Error("the job's time limit")), 10_000);
  const err = await rejection(provider().run(job)).finally(() => clearTimeout(limit));
  expect(err).toBeInstanceOf(ProviderError);
  expect((err as ProviderError).kind).toBe("failed");
  return err as ProviderError;
}

const idOf = (job: FakeJob) => job.upstreamIds[0]!;

describe("fal: a finished request's stored error", () => {
  const stored: [number, string, string][] = [
    [504, "request_timeout", "Request timed out"],
    [503, "runner_disconnected", "Runner disconnected unexpectedly"],
  ];
  for (const [status, errorType, detail] of stored) {
    test(`${status} ${errorType}: failed at once naming the error type, read once`, async () => {
      const id = `test/stored-${status}`;
      fal.on(id, { fail: { status, detail, errorType } });
      const job = fakeJob(model(id));
      const err = await failure(job);
      // fal's error_type is a code of its fixed vocabulary; its detail and the status are the log's.
      expect(err.message).toBe(`fal reports request ${idOf(job)} failed (${errorType}).`);
      expect(err).toMatchObject({ status, detail });
      expect(fal.callsTo("result", id)).toHaveLength(1);
    });
  }

  test("fal's detail is kept for the log only: bounded, the key redacted, never the raw body", async () => {
    const detail = `bad Key ${fal.key} ${"x".repeat(1000)}`;
    fal.on("test/stored-long", { fail: { status: 500, detail, errorType: "internal_error" } });
    const job = fakeJob(model("test/stored-long"));
    const err = await failure(job);
    expect(err.message).toBe(`fal reports request ${idOf(job)} failed (internal_error).`);
    expect(err.detail).not.toContain(fal.key);
    expect(err.detail).toStartWith("bad Key [redacted] xxx");
    expect(err.detail).not.toContain("error_type");
    expect(err.detail!.length).toBe(DETAIL_MAX_CHARS);
  });

  test("an error type that is not a code of fal's vocabulary is left out of the message", async () => {
    fal.on("test/stored-odd-type", { fail: { status: 504, detail: "late", errorType: "a b <c>" } });
    const job = fakeJob(model("test/stored-odd-type"));
    const err = await failure(job);
    expect(err.message).toBe(`fal reports request ${idOf(job)} failed.`);
    expect(err).toMatchObject({ status: 504, detail: "error_type a b <c>: late" });
  });

  test("a COMPLETED status with `error` names fal's error_type too", async () => {
    fal.on("test/status-error-typed", { statusError: "Runner crashed" });
    const job = fakeJob(model("test/status-error-typed"));
    const err = await failure(job);
    expect(err.message).toBe(`fal reports request ${idOf(job)} failed (runner_error).`);
    expect(err.detail).toBe("Runner crashed");
    expect(fal.callsTo("result", "test/status-error-typed")).toHaveLength(0);
  });
});

describe("fal: FAILED and CANCELED statuses", () => {
  test("FAILED: failed with its error type (its error for the log), the result never read", async () => {
    fal.on("test/status-failed", {
      finalStatus: { status: "FAILED", error: "Out of memory", errorType: "runner_error" },
    });
    const job = fakeJob(model("test/status-failed"));
    const err = await failure(job);
    expect(err.message).toBe(`fal reports request ${idOf(job)} failed (runner_error).`);
    expect(err.detail).toBe("Out of memory");
    expect(fal.callsTo("result", "test/status-failed")).toHaveLength(0);
    expect(fal.callsTo("cancel", "test/status-failed")).toHaveLength(0);
  });

  test("CANCELED: failed as cancelled on fal", async () => {
    fal.on("test/status-canceled", { finalStatus: { status: "CANCELED" } });
    const job = fakeJob(model("test/status-canceled"));
    const err = await failure(job);
    expect(err.message).toBe(`fal cancelled request ${idOf(job)}.`);
    expect(fal.callsTo("result", "test/status-canceled")).toHaveLength(0);
  });
});

describe("fal: log lines after a resume", () => {
  test("lines an earlier attempt forwarded are not forwarded again; new ones are", async () => {
    const id = fal.createRequest("fal-ai/resume/logs", {
      logs: ["loading", "step 1", "step 2"],
      progressPolls: 1,
    });
    const prior = [
      `fal: submitted request ${id} (queue position 2)`,
      "fal: in progress",
      "fal: loading",
      "fal: step 1",
    ];
    const job = fakeJob(model("fal-ai/resume/logs"), { prompt: "x" }, { upstreamId: id, priorLogs: prior });
    await provider().run(job);
    const upstream = job.logs.filter((l) => ["fal: loading", "fal: step 1", "fal: step 2"].includes(l));
    expect(upstream).toEqual(["fal: step 2"]);
  });

  test("a line fal repeats is skipped only as many times as it was forwarded before", async () => {
    const id = fal.createRequest("fal-ai/resume/repeats", {
      logs: ["tick", "tick", "tick"],
      progressPolls: 1,
    });
    const job = fakeJob(
      model("fal-ai/resume/repeats"),
      { prompt: "x" },
      { upstreamId: id, priorLogs: ["fal: tick"] },
    );
    await provider().run(job);
    expect(job.logs.filter((l) => l === "fal: tick")).toHaveLength(2);
  });
});
