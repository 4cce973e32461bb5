import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readBounded } from "../../../src/providers/comfyui/client.ts";
import { createComfyProvider } from "../../../src/providers/comfyui/index.ts";
import { encodePng } from "../../../src/providers/sandbox/media/index.ts";
import { ProviderError, ShutdownError } from "../../../src/providers/types.ts";
import { fakeJob, IMG2IMG_SCHEMA, model, rejection, settings } from "./helpers.ts";
import { type MockComfy, startMockComfy } from "./mock-comfy.ts";

let mock: MockComfy;
beforeAll(() => {
  mock = startMockComfy();
});
afterAll(() => mock.stop());
afterEach(() => {
  mock.fault = null;
  mock.runAfter = 1;
  mock.doneAfter = 3;
  mock.prompts.length = 0;
  mock.uploads.length = 0;
  mock.interrupts.length = 0;
  mock.deleted.length = 0;
  mock.requests.length = 0;
});

const provider = (over = {}) => createComfyProvider("comfy", settings(mock.url, over));
const count = (what: string) => mock.requests.filter((r) => r.startsWith(what)).length;

describe("comfyui provider: happy path", () => {
  test("queues the filled workflow, polls to success and returns the PNG bytes", async () => {
    const job = fakeJob({ prompt: "a red fox", seed: 11, steps: 8 });
    const result = await provider().run(job);
    expect(result.outputs).toHaveLength(1);
    const out = result.outputs[0]!;
    expect(out.kind).toBe("image");
    expect(out.contentType).toBe("image/png");
    expect(out.url).toBeUndefined();
    expect(out.bytes).toEqual(mock.png);
    expect([out.width, out.height]).toEqual([8, 6]);
    // What ComfyUI received: the filled workflow with JSON types, once.
    expect(mock.prompts).toHaveLength(1);
    const sent = mock.prompts[0]!;
    expect(sent.prompt["3"]!.inputs.steps).toBe(8);
    expect(sent.prompt["3"]!.inputs.seed).toBe(11);
    expect(sent.prompt["3"]!.inputs.cfg).toBe(7);
    expect(sent.prompt["6"]!.inputs.text).toBe("a red fox");
    expect(sent.prompt["9"]!.inputs.filename_prefix).toBe("gengate_11");
    expect(sent.clientId).toBe("gengate-comfy");
    // Our id, recorded before the submit, then confirmed by ComfyUI's answer.
    expect(sent.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(job.upstreamIds).toEqual([`submitting:${sent.id}`, sent.id]);
    // pending -> running -> done over several polls, then one /view.
    expect(count("GET /history/")).toBeGreaterThanOrEqual(3);
    expect(count("GET /view")).toBe(1);
  });

  test("the prompt id is recorded before the submit, and confirmed before the first poll", async () => {
    const at: { prompts: number; polls: number }[] = [];
    const job = fakeJob(
      { prompt: "x" },
      { onUpstreamId: () => at.push({ prompts: mock.prompts.length, polls: count("GET /history/") }) },
    );
    await provider().run(job);
    expect(at).toEqual([
      { prompts: 0, polls: 0 },
      { prompts: 1, polls: 0 },
    ]);
    expect(job.upstreamIds).toEqual([`submitting:${mock.prompts[0]!.id}`, mock.prompts[0]!.id]);
  });

  test("resumes a job with an upstreamId by polling only (never queues again)", async () => {
    mock.addDone("prompt-from-before");
    const job = fakeJob({ prompt: "x" }, { upstreamId: "prompt-from-before" });
    const p = provider();
    expect(p.resumable(job)).toBe(true);
    expect(p.resumable({ upstreamId: null })).toBe(false);
    const result = await p.run(job);
    expect(result.outputs[0]!.bytes).toEqual(mock.png);
    expect(count("POST /prompt")).toBe(0);
    expect(count("GET /history/prompt-from-before")).toBe(1);
    expect(job.upstreamIds).toEqual([]);
  });

  test("several files, content types by extension, temp previews ignored, kind from the model", async () => {
    const wav = new Uint8Array([82, 73, 70, 70, 1, 2, 3, 4]);
    mock.files.set("clip_00001.wav", wav);
    mock.files.set("notes.txt", new Uint8Array([1]));
    mock.outputFiles = [
      { filename: "clip_00001.wav", subfolder: "audio", type: "output" },
      { filename: "notes.txt", subfolder: "", type: "output" },
      { filename: "preview.png", subfolder: "", type: "temp" },
    ];
    try {
      const job = fakeJob({ prompt: "x" }, { model: model({ kind: "audio", unit: "second" }) });
      const result = await provider().run(job);
      expect(result.outputs).toEqual([{ kind: "audio", contentType: "audio/wav", bytes: wav }]);
      expect(mock.requests.filter((r) => r.startsWith("GET /view"))).toHaveLength(1);
    } finally {
      mock.outputFiles = [{ filename: "gengate_00001_.png", subfolder: "", type: "output" }];
    }
  });
});

describe("comfyui provider: image inputs", () => {
  const png = encodePng(4, 4, 3);
  let files: Awaited<ReturnType<typeof Bun.serve>>;
  let fileHits = 0;
  beforeAll(() => {
    files = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        fileHits++;
        const u = new URL(req.url);
        if (u.pathname === "/img.png") return new Response(png, { headers: { "content-type": "image/png" } });
        return new Response("no", { status: 403 });
      },
    });
  });
  afterAll(() => files.stop(true));
  const img2img = () =>
    model({ id: "local/img2img", upstream_model: "img2img", input_schema: IMG2IMG_SCHEMA });
  const loopbackAllowed = { model: img2img(), allowPrivateCidrs: ["127.0.0.0/8"] };

  test("an image URL the outbound policy allows is fetched, uploaded, and its ComfyUI name substituted", async () => {
    const job = fakeJob(
      { prompt: "edit", image_url: `http://127.0.0.1:${files.port}/img.png` },
      loopbackAllowed,
    );
    const result = await provider().run(job);
    expect(result.outputs).toHaveLength(1);
    expect(mock.uploads).toHaveLength(1);
    const up = mock.uploads[0]!;
    expect(up.bytes).toEqual(png);
    expect(up.type).toBe("input");
    expect(up.name).toBe("gengate-req_test1-image_url.png");
    expect(mock.prompts[0]!.prompt["10"]!.inputs.image).toBe(up.name);
    // Only the image field is uploaded; the prompt text stays text.
    expect(mock.prompts[0]!.prompt["9"]!.inputs.filename_prefix).toBe("edit");
  });

  test("a URL on the operator's network is refused before any fetch", async () => {
    fileHits = 0;
    const job = fakeJob(
      { prompt: "x", image_url: `http://127.0.0.1:${files.port}/img.png` },
      { model: img2img() },
    );
    const err = await rejection(provider().run(job));
    expect(err.kind).toBe("input");
    expect(err.message).toContain("image_url");
    expect(fileHits).toBe(0);
    expect(mock.uploads).toHaveLength(0);
    expect(count("POST /prompt")).toBe(0);
  });

  test("a URL that answers 403 is an input error that does not repeat the status", async () => {
    const link = `http://127.0.0.1:${files.port}/secret.png`;
    const err = await rejection(provider().run(fakeJob({ prompt: "x", image_url: link }, loopbackAllowed)));
    expect(err.kind).toBe("input");
    expect(err.message).toContain("image_url");
    expect(err.message).not.toContain("403");
    expect(count("POST /prompt")).toBe(0);
  });

  test("a non-URL value in an image field is passed through (a file already in ComfyUI's input folder)", async () => {
    await provider().run(fakeJob({ prompt: "x", image_url: "example.png" }, { model: img2img() }));
    expect(mock.uploads).toHaveLength(0);
    expect(mock.prompts[0]!.prompt["10"]!.inputs.image).toBe("example.png");
  });

  test("reads are bounded", async () => {
    const call = { timeoutMs: 1000, signal: new AbortController().signal };
    const big = new Response(new Uint8Array(100));
    expect((await rejection(readBounded(big, 50, "The image", call))).message).toContain("larger than");
    const ok = await readBounded(new Response(new Uint8Array(40)), 50, "The image", call);
    expect(ok.length).toBe(40);
  });
});

describe("comfyui provider: faults", () => {
  test("an invalid workflow (400) is an input error, the node error summary kept for the log", async () => {
    mock.fault = "invalid";
    const job = fakeJob({ prompt: "x" });
    const err = (await rejection(provider().run(job))) as ProviderError;
    expect(err.kind).toBe("input");
    expect(err.message).toBe("ComfyUI refused the workflow.");
    expect(err.status).toBe(400);
    expect(err.detail).toContain("Prompt outputs failed validation");
    expect(err.detail).toContain("node 4 (CheckpointLoaderSimple): Value not in list: ckpt_name");
    // Only the id chosen before the submit: ComfyUI queued nothing.
    expect(job.upstreamIds).toHaveLength(1);
    expect(job.upstreamIds[0]).toStartWith("submitting:");
  });

  test("an execution error is failed, ComfyUI's message kept for the log", async () => {
    mock.fault = "exec-error";
    const err = (await rejection(provider().run(fakeJob({ prompt: "x" })))) as ProviderError;
    expect(err.kind).toBe("failed");
    expect(err.message).toBe("ComfyUI failed the workflow.");
    expect(err.detail).toContain("at node 3 (KSampler): CUDA out of memory");
  });

  test("503 is capacity with its Retry-After", async () => {
    mock.fault = "503";
    const err = (await rejection(provider().run(fakeJob({ prompt: "x" })))) as ProviderError;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.kind).toBe("capacity");
    expect(err.retryAfterMs).toBe(3000);
  });

  test("503 while polling a resumed prompt is capacity too (the worker retries and resumes)", async () => {
    mock.addDone("p-503");
    mock.fault = "503";
    const err = await rejection(provider().run(fakeJob({ prompt: "x" }, { upstreamId: "p-503" })));
    expect(err.kind).toBe("capacity");
  });

  test("a malformed /history answer is failed, not a crash", async () => {
    mock.addDone("p-malformed");
    mock.fault = "malformed";
    const err = await rejection(provider().run(fakeJob({ prompt: "x" }, { upstreamId: "p-malformed" })));
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("malformed");
  });

  test("a dropped connection is capacity", async () => {
    const p = createComfyProvider("comfy", settings(mock.dropUrl));
    const err = await rejection(p.run(fakeJob({ prompt: "x" })));
    expect(err.kind).toBe("capacity");
  });

  test("connection refused is capacity", async () => {
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${s.port}`;
    s.stop(true);
    const err = await rejection(createComfyProvider("comfy", settings(url)).run(fakeJob({ prompt: "x" })));
    expect(err.kind).toBe("capacity");
    expect(err.message).toContain("could not be reached");
  });

  test("a slow server past timeoutMs is capacity", async () => {
    mock.fault = "slow";
    mock.slowMs = 300;
    const started = Date.now();
    const err = await rejection(provider({ timeoutMs: 60 }).run(fakeJob({ prompt: "x" })));
    expect(err.kind).toBe("capacity");
    expect(err.message).toContain("timed out");
    expect(Date.now() - started).toBeLessThan(250);
  });

  test("a slow server within timeoutMs still succeeds", async () => {
    mock.fault = "slow";
    mock.slowMs = 15;
    const result = await provider({ timeoutMs: 1000 }).run(fakeJob({ prompt: "x" }));
    expect(result.outputs[0]!.bytes).toEqual(mock.png);
  });

  test("a lost prompt (neither queued, running nor in history) is failed", async () => {
    mock.fault = "lost";
    const job = fakeJob({ prompt: "x" });
    const err = await rejection(provider().run(job));
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("lost");
    expect(job.upstreamIds).toHaveLength(2);
    expect(count("GET /queue")).toBeGreaterThanOrEqual(1);
  });

  test("a resumed prompt ComfyUI no longer knows (restarted) is failed", async () => {
    const err = await rejection(provider().run(fakeJob({ prompt: "x" }, { upstreamId: "forgotten" })));
    expect(err.kind).toBe("failed");
    expect(err.message).toContain("forgotten");
    expect(count("POST /prompt")).toBe(0);
  });

  test("an output cut off mid-download is capacity, and the retry reads it again", async () => {
    mock.addDone("p-cut");
    mock.fault = "view-cut";
    const err = await rejection(provider().run(fakeJob({ prompt: "x" }, { upstreamId: "p-cut" })));
    expect(err.kind).toBe("capacity");
    expect(err.message).toContain("cut off");
    mock.fault = null;
    const result = await provider().run(fakeJob({ prompt: "x" }, { upstreamId: "p-cut" }));
    expect(result.outputs[0]!.bytes).toEqual(mock.png);
    expect(count("POST /prompt")).toBe(0);
  });

  test("a missing input field is an input error before anything is queued", async () => {
    const err = await rejection(provider().run(fakeJob({ seed: 1 })));
    expect(err.kind).toBe("input");
    expect(err.message).toContain('"prompt"');
    expect(mock.requests).toEqual([]);
  });
});

describe("comfyui provider: abort", () => {
  const waitFor = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await Bun.sleep(5);
    expect(cond()).toBe(true);
  };

  test("an abort (time limit) stops promptly and interrupts the running prompt", async () => {
    mock.runAfter = 0;
    mock.doneAfter = Number.POSITIVE_INFINITY;
    const job = fakeJob({ prompt: "x" });
    const running = provider({ pollIntervalMs: 1000 }).run(job);
    await waitFor(() => count("GET /queue") >= 1);
    await Bun.sleep(30); // the first poll saw it running; now in the 1 s wait before the next poll
    const started = Date.now();
    job.controller.abort(new Error("time limit"));
    await rejection(running);
    expect(Date.now() - started).toBeLessThan(200);
    expect(mock.interrupts).toEqual([{ prompt_id: job.upstreamIds.at(-1) }]);
    expect(mock.deleted).toEqual([]);
  });

  test("an abort while still pending deletes the prompt from the queue instead", async () => {
    mock.runAfter = Number.POSITIVE_INFINITY;
    const job = fakeJob({ prompt: "x" });
    const running = provider().run(job);
    await waitFor(() => count("GET /history/") >= 1);
    job.controller.abort(new Error("time limit"));
    await rejection(running);
    expect(mock.deleted).toEqual([job.upstreamIds.at(-1)!]);
    expect(mock.interrupts).toEqual([]);
  });

  test("a shutdown abort leaves the prompt running for the next start to resume", async () => {
    mock.doneAfter = Number.POSITIVE_INFINITY;
    const job = fakeJob({ prompt: "x" });
    const running = provider().run(job);
    await waitFor(() => count("GET /history/") >= 2);
    job.controller.abort(new ShutdownError("shutting down"));
    await rejection(running);
    await Bun.sleep(30);
    expect(mock.interrupts).toEqual([]);
    expect(mock.deleted).toEqual([]);
  });

  test("an interrupt that fails does not throw over the abort", async () => {
    mock.doneAfter = Number.POSITIVE_INFINITY;
    const job = fakeJob({ prompt: "x" });
    const running = provider().run(job);
    await waitFor(() => count("GET /history/") >= 2);
    mock.fault = "503";
    job.controller.abort(new Error("time limit"));
    const err = await rejection(running);
    expect(job.signal.aborted).toBe(true);
    expect((err as { kind?: string }).kind).toBeUndefined();
  });
});
