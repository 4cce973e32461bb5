import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createFalProvider } from "../../../src/providers/fal/index.ts";
import { ProviderError, ShutdownError } from "../../../src/providers/types.ts";
import { fakeJob, model, rejection, settings } from "./helpers.ts";
import { type MockFal, startMockFal } from "./mock-fal.ts";

let fal: MockFal;
beforeAll(() => {
  fal = startMockFal();
});
afterAll(() => fal.stop());

const provider = () => createFalProvider("fal", settings(fal.url, fal.key));

describe("fal provider: happy paths", () => {
  test("image: submits the mapped input with the key, polls through the queue, forwards logs, maps images", async () => {
    fal.on("fal-ai/flux/dev", {
      queuePolls: 2,
      progressPolls: 3,
      logs: ["loading model", "step 10/28", "step 28/28"],
      result: {
        images: [
          { url: "https://v3.fal.media/files/a/1.png", content_type: "image/png", width: 1024, height: 768 },
          { url: "https://v3.fal.media/files/a/2.jpeg", width: 512, height: 512 },
        ],
        seed: 1234,
        timings: { inference: 2.5 },
        has_nsfw_concepts: [false, false],
      },
    });
    const m = model("fal-ai/flux/dev", "image", { input_map: { size: "image_size" } });
    const job = fakeJob(m, {
      prompt: "a red fox",
      size: "square_hd",
      num_images: 2,
      sandbox: { fail: true },
    });
    const result = await provider().run(job);

    const submits = fal.callsTo("submit", "fal-ai/flux/dev");
    expect(submits).toHaveLength(1);
    expect(submits[0]!.body).toEqual({ prompt: "a red fox", image_size: "square_hd", num_images: 2 });
    expect(submits[0]!.authorization).toBe(`Key ${fal.key}`);
    // status/result use the FIRST TWO segments of the model id
    const statuses = fal.callsTo("status", "fal-ai/flux/dev");
    expect(statuses.length).toBe(6); // 2 IN_QUEUE + 3 IN_PROGRESS + COMPLETED
    expect(statuses.every((c) => c.path.startsWith("/fal-ai/flux/requests/") && c.query === "?logs=1")).toBe(
      true,
    );
    expect(fal.callsTo("result", "fal-ai/flux/dev")).toHaveLength(1);

    expect(result.outputs).toEqual([
      {
        kind: "image",
        url: "https://v3.fal.media/files/a/1.png",
        contentType: "image/png",
        width: 1024,
        height: 768,
      },
      {
        kind: "image",
        url: "https://v3.fal.media/files/a/2.jpeg",
        contentType: "image/jpeg",
        width: 512,
        height: 512,
      },
    ]);
    expect(result.extra).toEqual({
      seed: 1234,
      timings: { inference: 2.5 },
      has_nsfw_concepts: [false, false],
    });
    expect(result.actualUnits).toBe(2);
    // each upstream line once, in order, even though every poll repeats them
    const forwarded = job.logs.filter((l) =>
      ["fal: loading model", "fal: step 10/28", "fal: step 28/28"].includes(l),
    );
    expect(forwarded).toEqual(["fal: loading model", "fal: step 10/28", "fal: step 28/28"]);
    expect(job.logs).toContain("fal: in queue (position 1)");
    expect(job.logs).toContain("fal: in progress");
    expect(job.upstreamIds).toHaveLength(1);
  });

  test("video: maps {video} with its duration, which becomes actualUnits", async () => {
    fal.on("fal-ai/kling-video/v2/text-to-video", {
      result: {
        video: { url: "https://v3.fal.media/files/v/out.mp4", content_type: "video/mp4", duration: 4.2 },
        seed: 7,
      },
    });
    const job = fakeJob(model("fal-ai/kling-video/v2/text-to-video", "video"), {
      prompt: "waves",
      duration: 5,
    });
    const result = await provider().run(job);
    expect(result.outputs).toEqual([
      { kind: "video", url: "https://v3.fal.media/files/v/out.mp4", contentType: "video/mp4", duration: 4.2 },
    ]);
    expect(result.actualUnits).toBe(4.2);
    expect(result.extra).toEqual({ seed: 7 });
    expect(fal.callsTo("status", "fal-ai/kling-video").length).toBeGreaterThan(0);
  });

  test("video without a duration: no actualUnits (the quote is charged), default content type", async () => {
    fal.on("fal-ai/ltx/video", { result: { video: { url: "https://v3.fal.media/files/v/clip" } } });
    const result = await provider().run(fakeJob(model("fal-ai/ltx/video", "video")));
    expect(result.outputs).toEqual([
      { kind: "video", url: "https://v3.fal.media/files/v/clip", contentType: "video/mp4" },
    ]);
    expect(result.actualUnits).toBeUndefined();
  });

  test("avatar models read `video` too; a top-level duration counts", async () => {
    fal.on("fal-ai/avatar/talk", { result: { video: { url: "https://x.fal.media/a.mp4" }, duration: 3 } });
    const result = await provider().run(fakeJob(model("fal-ai/avatar/talk", "avatar")));
    expect(result.outputs[0]).toMatchObject({ kind: "video", url: "https://x.fal.media/a.mp4", duration: 3 });
    expect(result.actualUnits).toBe(3);
  });

  test("audio: {audio: {url, duration}}", async () => {
    fal.on("fal-ai/tts/a", {
      result: {
        audio: { url: "https://v3.fal.media/files/s/speech.wav", content_type: "audio/wav", duration: 2.5 },
      },
    });
    const result = await provider().run(fakeJob(model("fal-ai/tts/a", "audio"), { text: "hello" }));
    expect(result.outputs).toEqual([
      {
        kind: "audio",
        url: "https://v3.fal.media/files/s/speech.wav",
        contentType: "audio/wav",
        duration: 2.5,
      },
    ]);
    expect(result.actualUnits).toBe(2.5);
  });

  test("audio: a bare audio_url string", async () => {
    fal.on("fal-ai/tts/b", {
      result: { audio_url: "https://v3.fal.media/files/s/speech.mp3", sample_rate: 44100 },
    });
    const result = await provider().run(fakeJob(model("fal-ai/tts/b", "audio")));
    expect(result.outputs).toEqual([
      { kind: "audio", url: "https://v3.fal.media/files/s/speech.mp3", contentType: "audio/mpeg" },
    ]);
    expect(result.extra).toEqual({ sample_rate: 44100 });
  });

  test("upscale: a single `image`", async () => {
    fal.on("fal-ai/esrgan", {
      result: { image: { url: "https://x.fal.media/up.png", width: 4096, height: 4096 } },
    });
    const result = await provider().run(
      fakeJob(model("fal-ai/esrgan", "upscale"), { image_url: "https://x/y.png" }),
    );
    expect(result.outputs).toEqual([
      {
        kind: "image",
        url: "https://x.fal.media/up.png",
        contentType: "image/png",
        width: 4096,
        height: 4096,
      },
    ]);
  });

  test("without upstream_model the catalog id is the fal model id", async () => {
    fal.on("fal-ai/flux/schnell", {});
    const m = { ...model("x/y"), id: "fal-ai/flux/schnell", upstream_model: null };
    await provider().run(fakeJob(m));
    expect(fal.callsTo("submit", "fal-ai/flux/schnell")).toHaveLength(1);
  });

  test("namespaced ids keep three segments in status/result paths", async () => {
    fal.on("workflows/acme/my-flow", { replyUrls: "none" });
    await provider().run(fakeJob(model("workflows/acme/my-flow")));
    const statuses = fal.callsTo("status", "workflows/acme/my-flow");
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses[0]!.path).toMatch(/^\/workflows\/acme\/my-flow\/requests\/[0-9a-f-]+\/status$/);
  });

  test("a reply without status_url/response_url: the paths are built", async () => {
    fal.on("fal-ai/bare/reply", { replyUrls: "none" });
    const result = await provider().run(fakeJob(model("fal-ai/bare/reply")));
    expect(result.outputs).toHaveLength(1);
    expect(fal.callsTo("result", "fal-ai/bare/reply")).toHaveLength(1);
  });

  test("status/response URLs pointing to another host are ignored (the key is never sent there)", async () => {
    fal.on("fal-ai/foreign/reply", { replyUrls: "foreign" });
    const result = await provider().run(fakeJob(model("fal-ai/foreign/reply")));
    expect(result.outputs).toHaveLength(1);
    expect(fal.callsTo("status", "fal-ai/foreign/reply").length).toBeGreaterThan(0);
  });

  test("a base URL with a path prefix and a trailing slash", async () => {
    const prefixed = startPrefixProxy(fal.url, "/queue");
    try {
      fal.on("fal-ai/prefix/model", {});
      const p = createFalProvider("fal", settings(`${prefixed.url}/queue/`, fal.key));
      const result = await p.run(fakeJob(model("fal-ai/prefix/model")));
      expect(result.outputs).toHaveLength(1);
      expect(prefixed.paths[0]).toBe("/queue/fal-ai/prefix/model");
      expect(prefixed.paths.slice(1).every((x) => x.startsWith("/queue/fal-ai/prefix/requests/"))).toBe(true);
    } finally {
      prefixed.stop();
    }
  });
});

describe("fal provider: resume and the request id", () => {
  test("with upstreamId set: no submit, polls that request and returns its result", async () => {
    const id = fal.createRequest("fal-ai/resume/me", {
      result: { images: [{ url: "https://x.fal.media/resumed.png" }] },
      logs: ["resumed line"],
    });
    const before = fal.callsTo("submit").length;
    const job = fakeJob(model("fal-ai/resume/me"), { prompt: "x" }, { upstreamId: id });
    const result = await provider().run(job);
    expect(fal.callsTo("submit").length).toBe(before);
    expect(fal.callsTo("status", "fal-ai/resume/me").every((c) => c.path.includes(id))).toBe(true);
    expect(result.outputs[0]!.url).toBe("https://x.fal.media/resumed.png");
    expect(job.upstreamIds).toEqual([]);
    expect(job.logs).toContain(`fal: resuming request ${id}`);
    expect(job.logs).toContain("fal: resumed line");
  });

  test("resuming a request fal no longer knows fails (no new submit)", async () => {
    const before = fal.callsTo("submit").length;
    const job = fakeJob(
      model("fal-ai/resume/gone"),
      {},
      { upstreamId: "0b7d0a5e-0000-4000-8000-000000000000" },
    );
    const err = await rejection(provider().run(job));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("fal lost track of request 0b7d0a5e-0000-4000-8000-000000000000.");
    expect((err as ProviderError).status).toBe(404);
    expect(fal.callsTo("submit").length).toBe(before);
  });

  test("a stored upstreamId that is not a request id is refused, not put in a URL", async () => {
    const job = fakeJob(model("fal-ai/resume/bad"), {}, { upstreamId: "../../etc/passwd" });
    const err = await rejection(provider().run(job));
    expect(err.kind).toBe("failed");
    expect(fal.calls.some((c) => c.path.includes("passwd"))).toBe(false);
  });

  test("setUpstreamId is called with fal's request_id before the first status poll", async () => {
    fal.on("fal-ai/order/check", { queuePolls: 2 });
    const seen: { id: string; statusCallsThen: number; known: boolean }[] = [];
    const job = fakeJob(
      model("fal-ai/order/check"),
      {},
      {
        onSetUpstreamId: (id) =>
          seen.push({
            id,
            statusCallsThen: fal.callsTo("status", "fal-ai/order/check").length,
            known: fal.requests.has(id),
          }),
      },
    );
    await provider().run(job);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.statusCallsThen).toBe(0);
    expect(seen[0]!.known).toBe(true);
    expect(fal.callsTo("status", "fal-ai/order/check").every((c) => c.path.includes(seen[0]!.id))).toBe(true);
  });

  test("resumable() is true exactly when the upstream id is known", () => {
    const p = provider();
    expect(p.resumable({ upstreamId: null })).toBe(false);
    expect(p.resumable({ upstreamId: "" })).toBe(false);
    expect(p.resumable({ upstreamId: "abc-123" })).toBe(true);
    expect(p.name).toBe("fal");
  });
});

describe("fal provider: abort", () => {
  test("aborting stops polling promptly and rejects with the signal's reason", async () => {
    fal.on("fal-ai/slow/forever", { queuePolls: 100_000 });
    const job = fakeJob(model("fal-ai/slow/forever"));
    const run = provider().run(job);
    await Bun.sleep(120);
    const reason = new Error("time limit");
    const t = performance.now();
    job.controller.abort(reason);
    const err = await rejection(run);
    expect(performance.now() - t).toBeLessThan(50);
    expect(err).toBe(reason);
    const polls = fal.callsTo("status", "fal-ai/slow/forever").length;
    expect(polls).toBeGreaterThan(1);
    await Bun.sleep(80);
    expect(fal.callsTo("status", "fal-ai/slow/forever").length).toBe(polls);
    // a time limit (any abort but a shutdown) cancels the request on fal, with the key
    const cancels = fal.callsTo("cancel", "fal-ai/slow/forever");
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.method).toBe("PUT");
    expect(cancels[0]!.authorization).toBe(`Key ${fal.key}`);
    expect(fal.requests.get(job.upstreamIds[0]!)!.cancelled).toBe(true);
    expect(job.logs).toContain(`fal: cancelled request ${job.upstreamIds[0]}`);
  });

  test("aborting during a long Retry-After back-off is prompt too", async () => {
    fal.on("fal-ai/busy-abort", { status: [{ status: 429, retryAfter: 20 }] });
    const job = fakeJob(model("fal-ai/busy-abort"));
    const run = provider().run(job);
    for (let i = 0; i < 50 && fal.callsTo("status", "fal-ai/busy-abort").length === 0; i++)
      await Bun.sleep(10);
    await Bun.sleep(20);
    const t = performance.now();
    job.controller.abort(new ShutdownError("shutting down"));
    const err = await rejection(run);
    expect(performance.now() - t).toBeLessThan(50);
    expect(err.message).toBe("shutting down");
    expect(fal.callsTo("status", "fal-ai/busy-abort")).toHaveLength(1);
    // a shutdown leaves the request running on fal: the next start resumes it
    expect(fal.callsTo("cancel", "fal-ai/busy-abort")).toHaveLength(0);
  });

  test("cancelOnAbort decides which aborts cancel on fal", async () => {
    fal.on("fal-ai/abort-custom", { queuePolls: 100_000 });
    class Shutdown extends Error {}
    const p = createFalProvider("fal", settings(fal.url, fal.key), {
      cancelOnAbort: (r) => !(r instanceof Shutdown),
    });
    const job = fakeJob(model("fal-ai/abort-custom"));
    const run = p.run(job);
    await Bun.sleep(60);
    job.controller.abort(new Shutdown("bye"));
    await rejection(run);
    expect(fal.callsTo("cancel", "fal-ai/abort-custom")).toHaveLength(0);
  });

  test("an already aborted job does not submit", async () => {
    fal.on("fal-ai/never-submit", {});
    const job = fakeJob(model("fal-ai/never-submit"));
    job.controller.abort(new Error("gone"));
    await rejection(provider().run(job));
    expect(fal.callsTo("submit", "fal-ai/never-submit")).toHaveLength(0);
    expect(job.upstreamIds).toEqual([]);
  });
});

/** A tiny reverse proxy that serves fal under a path prefix (an operator's proxy in front of fal). */
function startPrefixProxy(target: string, prefix: string) {
  const paths: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req): Promise<Response> {
      const u = new URL(req.url);
      paths.push(u.pathname);
      if (!u.pathname.startsWith(`${prefix}/`)) return new Response("no", { status: 404 });
      const res = await fetch(`${target}${u.pathname.slice(prefix.length)}${u.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === "GET" ? undefined : await req.text(),
      });
      const text: string = (await res.text()).replaceAll(target, `${server.url.origin}${prefix}`);
      return new Response(text, { status: res.status, headers: { "content-type": "application/json" } });
    },
  });
  return { url: server.url.origin, paths, stop: () => server.stop(true) };
}
