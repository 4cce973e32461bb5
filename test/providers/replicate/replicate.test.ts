import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Kind } from "../../../src/catalog/model.ts";
import { createReplicateProvider } from "../../../src/providers/replicate/index.ts";
import { ProviderError, ShutdownError } from "../../../src/providers/types.ts";
import { replicateHarness } from "./helpers.ts";
import {
  type MockReplicate,
  startDroppingServer,
  startMockReplicate,
  TOKEN,
  VERSION,
} from "./mock-replicate.ts";

let mock: MockReplicate;
beforeAll(() => {
  mock = startMockReplicate();
});
afterAll(() => mock.stop());

const { cfg, model, makeJob, runOk, runErr } = replicateHarness(() => mock);

/** Upstream log lines only (not the provider's own "created"/"resuming" notes). */
const upstreamLines = (logs: string[]) =>
  logs.filter((l) => !/^(Replicate prediction|resuming Replicate|Replicate busy)/.test(l));

const callsSince = (n: number) => mock.calls.slice(n);

describe("endpoint choice", () => {
  test('"owner/name" posts {input} to the model endpoint, with input_map applied', async () => {
    const before = mock.calls.length;
    const h = makeJob(model("acme/flux-dev", "image", { input_map: { prompt: "text" } }), {
      prompt: "a cat",
      seed: 7,
    });
    const r = await runOk(h);
    expect(r.outputs).toEqual([
      { kind: "image", contentType: "image/png", url: "https://replicate.delivery/pbxt/abc/out-0.png" },
    ]);
    const creates = callsSince(before).filter((c) => c.method === "POST");
    expect(creates.map((c) => c.path)).toEqual(["/v1/models/acme/flux-dev/predictions"]);
    expect(creates[0]!.body).toEqual({ input: { text: "a cat", seed: 7 } });
    expect(upstreamLines(h.logs)).toEqual(["step 1", "step 2", "loading done", "finished"]);
  });

  test('"owner/name:version" posts {version, input} to /predictions with the bare hash', async () => {
    const before = mock.calls.length;
    const r = await runOk(makeJob(model(`acme/flux:${VERSION}`), { prompt: "a dog" }));
    expect(r.outputs).toHaveLength(1);
    const creates = callsSince(before).filter((c) => c.method === "POST");
    expect(creates.map((c) => c.path)).toEqual(["/v1/predictions"]);
    expect(creates[0]!.body).toEqual({ version: VERSION, input: { prompt: "a dog" } });
  });

  test("a bare 64-hex version posts to /predictions", async () => {
    const before = mock.calls.length;
    await runOk(makeJob(model(VERSION), { prompt: "x" }));
    const creates = callsSince(before).filter((c) => c.method === "POST");
    expect(creates.map((c) => c.path)).toEqual(["/v1/predictions"]);
    expect((creates[0]!.body as { version: string }).version).toBe(VERSION);
  });

  test("a missing or malformed upstream_model fails without calling Replicate", async () => {
    for (const up of [undefined, "just-a-name", "a/b/c", "acme/flux:nothex"]) {
      const before = mock.calls.length;
      const err = await runErr(makeJob(model(up), { prompt: "x" }));
      expect(err.kind).toBe("failed");
      expect(err.message).toContain("upstream_model");
      expect(mock.calls.length).toBe(before);
    }
  });

  test("sandbox-only fields are not sent upstream", async () => {
    const before = mock.calls.length;
    await runOk(makeJob(model("acme/flux"), { prompt: "x", sandbox: { fail: true } }));
    const create = callsSince(before).find((c) => c.method === "POST")!;
    expect(create.body).toEqual({ input: { prompt: "x" } });
  });
});

describe("output shapes", () => {
  test("a list of URLs -> one image each, content types from the extension", async () => {
    const out = ["https://replicate.delivery/a/out-0.webp", "https://replicate.delivery/a/out-1.JPG"];
    const r = await runOk(makeJob(model("acme/sdxl"), { mock_output: out }));
    expect(r.outputs).toEqual([
      { kind: "image", contentType: "image/webp", url: out[0]! },
      { kind: "image", contentType: "image/jpeg", url: out[1]! },
    ]);
    expect(r.extra).toBeUndefined();
  });

  test("an object with nested lists -> every URL in order, non-URL values in extra", async () => {
    const out = {
      video: "https://replicate.delivery/v/out.mp4",
      seed: 42,
      thumbnails: [["https://replicate.delivery/v/t0.png"], { more: "https://replicate.delivery/v/t1.jpeg" }],
      caption: "a cat",
      frames: [1, "https://replicate.delivery/v/clip.webm"],
    };
    const r = await runOk(makeJob(model("acme/video", "video"), { mock_output: out }));
    expect(r.outputs).toEqual([
      { kind: "video", contentType: "video/mp4", url: "https://replicate.delivery/v/out.mp4" },
      { kind: "video", contentType: "image/png", url: "https://replicate.delivery/v/t0.png" },
      { kind: "video", contentType: "image/jpeg", url: "https://replicate.delivery/v/t1.jpeg" },
      { kind: "video", contentType: "video/webm", url: "https://replicate.delivery/v/clip.webm" },
    ]);
    expect(r.extra).toEqual({ seed: 42, caption: "a cat", frames: [1] });
  });

  test("audio: {audio_out: url} with a query string; extra keeps the duration", async () => {
    const r = await runOk(
      makeJob(model("acme/tts", "audio"), {
        mock_output: { audio_out: "https://replicate.delivery/s/speech.wav?sig=abc", duration: 3.2 },
      }),
    );
    expect(r.outputs).toEqual([
      { kind: "audio", contentType: "audio/wav", url: "https://replicate.delivery/s/speech.wav?sig=abc" },
    ]);
    expect(r.extra).toEqual({ duration: 3.2 });
  });

  test("no known extension -> the kind's default content type; kinds by model kind", async () => {
    const cases: [Kind, string, string][] = [
      ["avatar", "video", "video/mp4"],
      ["upscale", "image", "image/png"],
      ["audio", "audio", "audio/mpeg"],
      ["image", "image", "image/png"],
    ];
    for (const [kind, media, type] of cases) {
      const r = await runOk(makeJob(model("acme/m", kind), { mock_output: "https://example.com/files/abc" }));
      expect(r.outputs).toEqual([
        { kind: media as "image", contentType: type, url: "https://example.com/files/abc" },
      ]);
    }
    const mp3 = await runOk(makeJob(model("acme/m", "audio"), { mock_output: ["http://x.test/a.mp3"] }));
    expect(mp3.outputs[0]!.contentType).toBe("audio/mpeg");
    const mov = await runOk(makeJob(model("acme/m", "video"), { mock_output: "https://x.test/a.mov" }));
    expect(mov.outputs[0]!.contentType).toBe("video/quicktime");
  });

  test("an output key that would replace the media in the job output goes under extra.output", async () => {
    const r = await runOk(
      makeJob(model("acme/m"), { mock_output: { images: ["https://x.test/a.png", "note"], nsfw: false } }),
    );
    expect(r.outputs.map((o) => o.url)).toEqual(["https://x.test/a.png"]);
    expect(r.extra).toEqual({ nsfw: false, output: { images: ["note"] } });
  });

  test("succeeded without any URL -> failed with a clear message", async () => {
    for (const out of ["just words", null, { text: "hello" }, ["ftp://x/a.png"]]) {
      const err = await runErr(makeJob(model("acme/m"), { mock_output: out }));
      expect(err.kind).toBe("failed");
      expect(err.message).toContain("no media URL");
    }
  });

  test("a create answered already succeeded is not polled", async () => {
    const h = makeJob(model("acme/m"), { fault: "sync" });
    const r = await runOk(h);
    expect(r.outputs).toEqual([
      { kind: "image", contentType: "image/webp", url: "https://replicate.delivery/pbxt/sync/out.webp" },
    ]);
    const id = h.upstreamIds[0]!.id;
    expect(mock.predictions.get(id)!.polls).toBe(0);
    expect(upstreamLines(h.logs)).toEqual(["all at once"]);
  });
});

describe("upstream id and resume", () => {
  test("setUpstreamId is called once, with the created id, before the first poll", async () => {
    const h = makeJob(model("acme/m"), { prompt: "x" });
    await runOk(h);
    expect(h.upstreamIds).toHaveLength(1);
    const { id, pollsSoFar } = h.upstreamIds[0]!;
    expect(mock.predictions.has(id)).toBe(true);
    expect(pollsSoFar).toBe(0);
    expect(mock.predictions.get(id)!.polls).toBeGreaterThanOrEqual(4);
  });

  test("with job.upstreamId it resumes polling that prediction and never creates", async () => {
    const id = mock.seed({ prompt: "earlier" });
    const before = mock.creates().length;
    const h = makeJob(model("acme/m"), { prompt: "earlier" }, id);
    const r = await runOk(h);
    expect(r.outputs).toHaveLength(1);
    expect(mock.creates().length).toBe(before);
    expect(h.upstreamIds).toEqual([]);
    expect(mock.predictions.get(id)!.polls).toBeGreaterThanOrEqual(4);
  });

  test("resuming a prediction Replicate lost (404) fails", async () => {
    const err = await runErr(makeJob(model("acme/m"), { prompt: "x" }, "doesnotexist123"));
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("Replicate lost prediction doesnotexist123.");
    expect(err.status).toBe(404);
  });

  test("resumable() is true exactly when the upstream id is known", () => {
    const p = createReplicateProvider("replicate", cfg());
    expect(p.name).toBe("replicate");
    expect(p.resumable({ upstreamId: "abc" })).toBe(true);
    expect(p.resumable({ upstreamId: null })).toBe(false);
  });
});

describe("create faults", () => {
  test("429 -> capacity with Retry-After honoured", async () => {
    const err = await runErr(makeJob(model("fault/create_429"), { prompt: "x" }));
    expect(err.kind).toBe("capacity");
    expect(err.retryAfterMs).toBe(3000);
  });

  test("503 -> capacity", async () => {
    const h = makeJob(model("acme/m"), { fault: "create_503" });
    const err = await runErr(h);
    expect(err.kind).toBe("capacity");
    expect(h.upstreamIds).toEqual([]);
  });

  test("500 -> failed", async () => {
    const err = await runErr(makeJob(model("fault/create_500"), { prompt: "x" }));
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("The upstream failed the call.");
    expect(err).toMatchObject({ status: 500, detail: "Internal Server Error" });
  });

  test("malformed JSON and a missing id -> failed", async () => {
    const a = await runErr(makeJob(model("fault/create_malformed"), {}));
    expect(a.kind).toBe("failed");
    expect(a.message).toContain("malformed");
    const h = makeJob(model("fault/create_no_id"), {});
    const b = await runErr(h);
    expect(b.kind).toBe("failed");
    expect(b.message).toContain("no prediction id");
    expect(h.upstreamIds).toEqual([]);
  });

  test("422 on bad input -> input, Replicate's detail kept for the log", async () => {
    const err = await runErr(makeJob(model("acme/m"), { prompt: 12 }));
    expect(err.kind).toBe("input");
    expect(err.message).toBe("Replicate refused the prediction's input.");
    expect(err.status).toBe(422);
    expect(err.detail).toContain("input.prompt: Invalid type");
  });

  test("an unknown model (404 on create) -> failed", async () => {
    const err = await runErr(makeJob(model("missing/model"), { prompt: "x" }));
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("Replicate does not know model missing/model.");
    expect(err.status).toBe(404);
  });

  test("a connection dropped after sending the create -> failed, not capacity (never repeated)", async () => {
    const dropper = startDroppingServer();
    try {
      const h = makeJob(model("acme/m"), { prompt: "x" });
      const err = await runErr(h, cfg({ baseUrl: dropper.url }));
      expect(dropper.received).toEqual(["POST /v1/models/acme/m/predictions HTTP/1.1"]);
      expect(err.kind).toBe("failed");
      expect(err.message).toContain("not retried");
      expect(h.upstreamIds).toEqual([]);
    } finally {
      dropper.stop();
    }
  });

  test("a wrong token (401) -> failed, and the token is in no message", async () => {
    const wrong = "r8_WRONG_token_value_987654321";
    const err = await runErr(makeJob(model("acme/m"), { prompt: "x" }), cfg({ apiKey: wrong }));
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("Replicate refused the gateway's API token.");
    expect(err.status).toBe(401);
    expect(err.message).not.toContain(wrong);
    expect(err.detail).not.toContain(wrong);
  });
});

describe("poll faults and outcomes", () => {
  test("429 and 503 while polling: back off and keep polling to success", async () => {
    for (const fault of ["poll_429", "poll_503"]) {
      const h = makeJob(model("acme/m"), { fault });
      const r = await runOk(h);
      expect(r.outputs).toHaveLength(1);
      const p = mock.predictions.get(h.upstreamIds[0]!.id)!;
      expect(p.polls).toBe(2 + 4);
      expect(h.logs.some((l) => l.startsWith("Replicate busy while polling"))).toBe(true);
      expect(upstreamLines(h.logs)).toEqual(["step 1", "step 2", "loading done", "finished"]);
    }
  });

  test("Retry-After on a poll 429 is honoured", async () => {
    const h = makeJob(model("acme/m"), { fault: "poll_429", retry_after: "1", busy_polls: 1 });
    const t0 = performance.now();
    await runOk(h);
    const id = h.upstreamIds[0]!.id;
    const polls = mock.calls.filter((c) => c.method === "GET" && c.path.endsWith(id));
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(950);
    expect(performance.now() - t0).toBeLessThan(2500);
  });

  test("a single 500 while polling is tolerated", async () => {
    const r = await runOk(makeJob(model("acme/m"), { fault: "poll_500_once" }));
    expect(r.outputs).toHaveLength(1);
  });

  test("persistent 500 while polling -> failed, and the prediction is canceled", async () => {
    const h = makeJob(model("acme/m"), { fault: "poll_500" });
    const err = await runErr(h);
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(
      /^Polling Replicate about prediction \S+ failed: The upstream failed the call\.$/,
    );
    expect(err.status).toBe(500);
    expect(mock.cancels()).toContain(h.upstreamIds[0]!.id);
  });

  test("malformed poll answers -> failed", async () => {
    const a = await runErr(makeJob(model("acme/m"), { fault: "poll_malformed" }));
    expect(a.kind).toBe("failed");
    expect(a.message).toContain("malformed");
    const b = await runErr(makeJob(model("acme/m"), { fault: "poll_bad_shape" }));
    expect(b.kind).toBe("failed");
    expect(b.message).toContain("no prediction id");
  });

  test("a prediction lost upstream (404 on poll) -> failed", async () => {
    const err = await runErr(makeJob(model("acme/m"), { fault: "lost" }));
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^Replicate lost prediction \S+\.$/);
    expect(err.status).toBe(404);
  });

  test("status failed -> failed, the prediction's error kept for the log; its logs are forwarded", async () => {
    const h = makeJob(model("acme/m"), { fault: "failed" });
    const err = await runErr(h);
    expect(err.kind).toBe("failed");
    expect(err.message).toBe(`The Replicate prediction ${h.upstreamIds[0]!.id} failed.`);
    expect(err.detail).toBe("CUDA out of memory");
    expect(upstreamLines(h.logs)).toEqual(["step 1", "Traceback: RuntimeError"]);
  });

  test("status canceled -> failed", async () => {
    const err = await runErr(makeJob(model("acme/m"), { fault: "canceled" }));
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("canceled");
  });

  test("an unknown status -> failed", async () => {
    const err = await runErr(makeJob(model("acme/m"), { fault: "unknown_status" }));
    expect(err.kind).toBe("failed");
    expect(err.message).toMatch(/^Replicate sent an unknown status for prediction \S+\.$/);
    expect(err.detail).toBe('status "exploded"');
  });

  test("the token never reaches an error message, its detail or a log line", async () => {
    const h = makeJob(model("acme/m"), { fault: "echo_token" });
    const err = await runErr(h);
    expect(err.detail).toContain("[redacted]");
    expect(err.message).not.toContain(TOKEN);
    expect(err.detail).not.toContain(TOKEN);
    expect(h.logs.join("\n")).toContain("[redacted]");
    expect(h.logs.join("\n")).not.toContain(TOKEN);
  });
});

describe("abort", () => {
  test("job.signal stops polling promptly and cancels the prediction", async () => {
    const h = makeJob(model("acme/m"), { fault: "slow" });
    const reason = new Error("time limit");
    // A long poll interval: the abort must cut the wait short, not wait it out.
    const running = createReplicateProvider("replicate", cfg({ pollIntervalMs: 150 })).run(h.job);
    while (upstreamLines(h.logs).length < 2) await Bun.sleep(5);
    const id = h.upstreamIds[0]!.id;
    const t0 = performance.now();
    h.controller.abort(reason);
    const err = await running.catch((e) => e);
    expect(performance.now() - t0).toBeLessThan(75);
    expect(err).toBe(reason);
    expect(mock.cancels()).toContain(id);
    expect(mock.predictions.get(id)!.status).toBe("canceled");
    const polls = mock.predictions.get(id)!.polls;
    await Bun.sleep(80);
    expect(mock.predictions.get(id)!.polls).toBe(polls);
    expect(upstreamLines(h.logs).slice(0, 2)).toEqual(["tick 1", "tick 2"]);
  });

  test("a failing cancel does not throw over the abort", async () => {
    const h = makeJob(model("acme/m"), { fault: "slow", cancel_fails: true });
    const running = createReplicateProvider("replicate", cfg()).run(h.job);
    while (h.upstreamIds.length === 0) await Bun.sleep(5);
    h.controller.abort(new Error("time limit"));
    const err = (await running.catch((e) => e)) as Error;
    expect(err.message).toBe("time limit");
    expect(err).not.toBeInstanceOf(ProviderError);
    expect(mock.cancels()).toContain(h.upstreamIds[0]!.id);
    expect(mock.predictions.get(h.upstreamIds[0]!.id)!.canceled).toBe(false);
  });

  test("a shutdown abort stops polling but leaves the prediction running for the resume", async () => {
    const h = makeJob(model("acme/m"), { fault: "slow" });
    const running = createReplicateProvider("replicate", cfg()).run(h.job);
    while (upstreamLines(h.logs).length < 1) await Bun.sleep(5);
    const id = h.upstreamIds[0]!.id;
    const reason = new ShutdownError("shutting down");
    h.controller.abort(reason);
    expect(await running.catch((e) => e)).toBe(reason);
    expect(mock.cancels()).not.toContain(id);
    expect(mock.predictions.get(id)!.status).toBe("processing");
  });

  test("an already aborted signal calls nothing", async () => {
    const before = mock.calls.length;
    const h = makeJob(model("acme/m"), { prompt: "x" });
    h.controller.abort(new Error("gone"));
    await expect(createReplicateProvider("replicate", cfg()).run(h.job)).rejects.toThrow("gone");
    expect(mock.calls.length).toBe(before);
  });
});
