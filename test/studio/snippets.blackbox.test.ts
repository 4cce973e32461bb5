/**
 * The studio's "Code", run as a reader would run it: the snippet with a real key in place of the
 * placeholder, against a real server (the compiled binary under GENGATE_BIN), opens the job it
 * describes. curl through sh; JavaScript through node with the real @fal-ai/client and openai.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { KEY_PLACEHOLDER, studioSnippets } from "../../src/studio/snippets.ts";
import { startFunded } from "../helpers/api.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
// Inside the checkout, so node resolves the packages from its node_modules.
let dir = "";
const catalog = buildCatalog();

beforeAll(async () => {
  s = await startFunded();
  dir = mkdtempSync(join(import.meta.dir, "..", "..", ".snippets-"));
});
afterAll(() => {
  s.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(cmd: string[]) {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", cwd: dir });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { out, err, code };
}

const withKey = (text: string) => text.replaceAll(KEY_PLACEHOLDER, s.defaultKey!);

async function record(id: string) {
  const res = await s.fetch(`/v1/requests/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { model_id: string; status: string; input: unknown; source: string };
}

describe("studio snippets against a real server", () => {
  test("curl: submits the job with exactly the form's input", async () => {
    const input = { prompt: `it's a "fox"`, num_images: 2, width: 64, height: 64 };
    const snip = studioSnippets(catalog.get("sandbox/image")!, input, s.url);
    const r = await run(["sh", "-c", withKey(snip.curl)]);
    expect(r.code).toBe(0);
    const queued = JSON.parse(r.out) as { request_id: string; status: string };
    expect(queued.status).toBe("IN_QUEUE");
    const job = await record(queued.request_id);
    expect(job.model_id).toBe("sandbox/image");
    expect(job.input).toEqual(input);
  });

  test("JavaScript (@fal-ai/client): subscribes, the job completes with the form's input", async () => {
    const input = { text: "hello from the studio", duration: 2 };
    const snip = studioSnippets(catalog.get("sandbox/speech")!, input, s.url);
    const file = join(dir, "media.mjs");
    writeFileSync(file, withKey(snip.javascript));
    const r = await run(["node", file]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const id = /([0-9a-f-]{36}) \{/.exec(r.out)?.[1];
    expect(id).toBeDefined();
    expect(r.out).toContain("COMPLETED");
    const job = await record(id!);
    expect([job.model_id, job.status]).toEqual(["sandbox/speech", "COMPLETED"]);
    expect(job.input).toEqual(input);
  });

  test("JavaScript (openai): streams a chat reply from the text model", async () => {
    const snip = studioSnippets(catalog.get("sandbox/chat")!, {}, s.url);
    const file = join(dir, "chat.mjs");
    writeFileSync(file, withKey(snip.javascript));
    const r = await run(["node", file]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out.trim().length).toBeGreaterThan(0);
    const list = (await (await s.fetch("/v1/requests?model_id=sandbox/chat")).json()) as {
      data: { model_id: string; status: string }[];
    };
    expect(list.data.some((j) => j.model_id === "sandbox/chat" && j.status === "COMPLETED")).toBe(true);
  });

  /** Runs one of a snippet's other-client tabs through node, with a real key; its stdout. */
  async function runTab(modelId: string, input: Record<string, unknown>, tab: string) {
    const snip = studioSnippets(catalog.get(modelId)!, input, s.url).more.find((m) => m.id === tab)!;
    const file = join(dir, `${tab}.mjs`);
    writeFileSync(file, withKey(snip.text));
    const r = await run(["node", file]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    return r.out;
  }

  test("JavaScript (replicate): runs the prediction, prints its output links", async () => {
    const input = { prompt: "from the studio", num_images: 1, width: 64, height: 64 };
    const out = await runTab("sandbox/image", input, "replicate");
    const id = /\/v1\/requests\/([0-9a-f-]{36})\/output\/0/.exec(out)?.[1];
    expect(id).toBeDefined();
    const job = await record(id!);
    expect([job.model_id, job.status, job.input]).toEqual(["sandbox/image", "COMPLETED", input]);
  });

  test("JavaScript (openai): images.generate, audio.speech.create and videos.create on the media doors", async () => {
    const image = await runTab(
      "sandbox/image",
      { prompt: "a fox", num_images: 2, width: 80, height: 64 },
      "openai-media",
    );
    expect(image.trim().split("\n")).toHaveLength(2);
    expect(await runTab("sandbox/speech", { text: "hello", duration: 2 }, "openai-media")).toContain(
      "speech.wav",
    );
    const video = await runTab("sandbox/video", { prompt: "a fox", duration: 1 }, "openai-media");
    const id = /^([0-9a-f-]{36}) video.webm/.exec(video.trim())?.[1];
    expect((await record(id!)).status).toBe("COMPLETED");
  });

  test("JavaScript (@anthropic-ai/sdk) and the AI SDK (Responses): a reply from the text model", async () => {
    expect((await runTab("sandbox/chat", {}, "anthropic-js")).trim().length).toBeGreaterThan(0);
    expect((await runTab("sandbox/chat", {}, "ai-sdk")).trim().length).toBeGreaterThan(0);
  });

  test("a studio chat's own call (system prompt, conversation, temperature, max_tokens) runs on every JavaScript tab", async () => {
    const body = {
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "Say more" },
      ],
      temperature: 0.5,
      max_tokens: 3,
    };
    const snip = studioSnippets(catalog.get("sandbox/chat")!, body, s.url);
    const file = join(dir, "chat-own.mjs");
    writeFileSync(file, withKey(snip.javascript));
    const r = await run(["node", file]);
    expect(r.err).toBe("");
    // The sandbox answers "You said: ..." of the last user message, cut at max_tokens (3 tokens).
    expect(r.out).toStartWith("You said");
    expect(r.out).not.toContain("Say more");
    const list = (await (await s.fetch("/v1/requests?model_id=sandbox/chat&limit=1")).json()) as {
      data: { request_id: string }[];
    };
    const job = (await record(list.data[0]!.request_id)) as {
      input: { messages: unknown; max_tokens: number };
    };
    expect(job.input).toEqual({ messages: body.messages, max_tokens: 3 });
    for (const tab of ["anthropic-js", "ai-sdk"])
      expect((await runTab("sandbox/chat", body, tab)).trim().length).toBeGreaterThan(0);
  });
});
