import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cancelAfter } from "../../../src/providers/replicate/index.ts";
import { png } from "../media-fixtures.ts";
import { replicateHarness } from "./helpers.ts";
import { type MockReplicate, startMockReplicate } from "./mock-replicate.ts";

/**
 * Replicate's own deadline (the Cancel-After header of a create, replicate.com/changelog/
 * 2025-10-16-prediction-deadlines): a prediction whose deadline passes before it starts is
 * `aborted` (never run, not billed); and outputs given as `data:` URLs, which Replicate's client
 * treats as files like https URLs (replicate-javascript index.js `run`, `useFileOutput`).
 */
let mock: MockReplicate;
beforeAll(() => {
  mock = startMockReplicate();
});
afterAll(() => mock.stop());

const { model, makeJob, runOk, runErr } = replicateHarness(() => mock);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

describe("Cancel-After", () => {
  test("the create carries the time left until the job's deadline, in seconds", async () => {
    const h = makeJob(model("acme/m"), { prompt: "x" });
    h.job.deadlineAt = Date.now() + 600_000;
    await runOk(h);
    const p = mock.predictions.get(h.upstreamIds[0]!.id)!;
    expect(p.cancelAfter).toMatch(/^(599|600)s$/);
  });

  test("the header's value: whole seconds left, rounded up, at least 1 s; none without a deadline", () => {
    expect(cancelAfter(10_000, 0)).toEqual({ "cancel-after": "10s" });
    expect(cancelAfter(10_001, 0)).toEqual({ "cancel-after": "11s" });
    expect(cancelAfter(5, 100)).toEqual({ "cancel-after": "1s" });
    expect(cancelAfter(undefined)).toEqual({});
  });

  test("Replicate aborts a prediction still queued at the deadline: the job fails at once, nothing cancelled", async () => {
    const h = makeJob(model("acme/m"), { prompt: "x", fault: "queued" });
    h.job.deadlineAt = Date.now() + 1_000;
    // Liveness bound: without the header Replicate would never stop it and the job would wait for
    // the worker's own time limit, which this stands in for.
    const limit = setTimeout(() => h.controller.abort(new Error("the worker's time limit")), 15_000);
    const err = await runErr(h).finally(() => clearTimeout(limit));
    const id = h.upstreamIds[0]!.id;
    expect(mock.predictions.get(id)!.status).toBe("aborted");
    expect(err.kind).toBe("failed");
    expect(err.message).toBe(
      `The Replicate prediction ${id} was aborted: the job's time limit passed before it started running.`,
    );
    expect(mock.cancels()).not.toContain(id);
  });
});

describe("status aborted", () => {
  test("is a failed job with a clear message, and no cancel is sent for it", async () => {
    const h = makeJob(model("acme/m"), { prompt: "x", fault: "aborted" });
    const err = await runErr(h);
    const id = h.upstreamIds[0]!.id;
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("was aborted");
    expect(mock.cancels()).not.toContain(id);
  });
});

describe("data: outputs", () => {
  test("a data: URL is decoded to the output's bytes; its type is read from the bytes, not the URL", async () => {
    const image = png(20, 10);
    const h = makeJob(model("acme/m"), { prompt: "x", mock_output: [`data:text/html;base64,${b64(image)}`] });
    const r = await runOk(h);
    expect(r.outputs).toHaveLength(1);
    expect(r.outputs[0]!.url).toBeUndefined();
    expect(r.outputs[0]!.bytes).toEqual(image);
    expect(r.outputs[0]!.contentType).toBe("image/png");
  });

  test("the mock's own data: output (fault data_output) maps the same way", async () => {
    const r = await runOk(makeJob(model("acme/m"), { prompt: "x", fault: "data_output" }));
    expect(r.outputs[0]!.contentType).toBe("image/png");
    expect(r.outputs[0]!.bytes!.length).toBeGreaterThan(8);
  });

  test("https and data: outputs together keep their order", async () => {
    const out = ["https://replicate.delivery/a.png", `data:image/png;base64,${b64(png(4, 4))}`];
    const r = await runOk(makeJob(model("acme/m"), { prompt: "x", mock_output: out }));
    expect(r.outputs.map((o) => (o.url ? "url" : "bytes"))).toEqual(["url", "bytes"]);
  });

  test("a data: URL whose bytes are no known media fails the job", async () => {
    const out = `data:image/png;base64,${b64(new TextEncoder().encode("<script>alert(1)</script>"))}`;
    const err = await runErr(makeJob(model("acme/m"), { prompt: "x", mock_output: out }));
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("Replicate's output #1 is a data: URL that holds no known image format.");
  });

  test("a malformed data: URL fails the job", async () => {
    const err = await runErr(
      makeJob(model("acme/m"), { prompt: "x", mock_output: "data:image/png;base64,@@@" }),
    );
    expect(err.message).toBe("Replicate's output #1 is a malformed data: URL.");
  });
});
