import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFunded } from "../helpers/api.ts";
import { runPythonProbe } from "../helpers/python-probe.ts";

/**
 * The official `openai` Python SDK (PyPI) against gengate: models, chat (plain and streamed) and
 * errors, exactly as a Python client developer would use it. The interpreter is GENGATE_PYTHON
 * (.ci/run sets it), else the virtualenv scripts/python-env keeps in .tools/python-env, created on
 * first use with pip. Without Python 3 and pip this test fails, saying how to install them.
 */
const ROOT = resolve(import.meta.dir, "../..");

async function pythonWithOpenAI(): Promise<string> {
  const given = process.env.GENGATE_PYTHON;
  if (given) {
    if (!existsSync(given))
      throw new Error(`GENGATE_PYTHON=${given} does not exist; create it with: sh scripts/python-env`);
    return given;
  }
  const setup = Bun.spawn(["sh", join(ROOT, "scripts/python-env")], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(setup.stdout).text(),
    new Response(setup.stderr).text(),
    setup.exited,
  ]);
  if (code !== 0)
    throw new Error(
      `no Python with the openai package: scripts/python-env failed (${code}).\n${stderr}\n` +
        "Install Python 3 with venv and pip (Debian: apt-get install python3 python3-venv python3-pip), " +
        "then run `sh scripts/python-env`, or point GENGATE_PYTHON at a python that has `openai` installed.",
    );
  return stdout.trim().split("\n").pop()!;
}

type ModelFields = { id: string; object: string; created: number; owned_by: string };
type ErrFields = { class: string; status: number; code: string | null; type: string | null; message: string };
type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
interface Probe {
  sdk_version: string;
  models: ModelFields[];
  retrieved: ModelFields;
  retrieve_unknown: ErrFields | null;
  chat: { id: string; object: string; model: string; content: string; finish_reason: string; usage: Usage };
  stream: { content: string; chunks: number; usage: Usage | null; finish_reason: string | null };
  chat_unknown_model: ErrFields | null;
  bad_key: ErrFields | null;
}

let s: Awaited<ReturnType<typeof startFunded>>;
let probe: Probe;
let probeError: string | null = null;

beforeAll(async () => {
  const python = await pythonWithOpenAI();
  s = await startFunded();
  const ran = await runPythonProbe<Probe>(python, join(import.meta.dir, "openai_probe.py"), {
    url: s.url,
    key: s.defaultKey!,
  });
  probeError = ran.error;
  if (ran.probe) probe = ran.probe;
}, 300_000);
afterAll(() => s?.cleanup());

describe("the openai Python SDK against gengate", () => {
  test("the probe ran to the end", () => {
    expect(probeError).toBeNull();
    expect(probe.sdk_version).toMatch(/^\d+\.\d+/);
  });

  test("models.list: every catalog model as an OpenAI model object", async () => {
    const ids = (
      (await (await s.get("/v1/models", { key: null })).json()) as { data: { id: string }[] }
    ).data.map((m) => m.id);
    expect(probe.models.map((m) => m.id)).toEqual(ids);
    for (const m of probe.models) {
      expect(m.object).toBe("model");
      expect(Number.isInteger(m.created)).toBe(true);
      expect(m.owned_by).toBe(m.id.split("/")[0]!);
    }
  });

  test('models.retrieve("sandbox/chat") (sent as sandbox%2Fchat) and an unknown model: NotFoundError', () => {
    expect(probe.retrieved).toEqual(probe.models.find((m) => m.id === "sandbox/chat")!);
    expect(probe.retrieve_unknown).toMatchObject({
      class: "NotFoundError",
      status: 404,
      code: "not_found",
      type: "invalid_request_error",
    });
    expect(probe.retrieve_unknown!.message).toContain("acme/missing");
  });

  test("chat completion, not streamed", () => {
    expect(probe.chat).toMatchObject({
      object: "chat.completion",
      model: "sandbox/chat",
      finish_reason: "length",
    });
    expect(probe.chat.id).toStartWith("chatcmpl-");
    expect(probe.chat.content).toStartWith('You said: "Hello from Python"');
    expect(probe.chat.usage.completion_tokens).toBe(12);
    expect(probe.chat.usage.total_tokens).toBe(probe.chat.usage.prompt_tokens + 12);
  });

  test("chat completion, streamed with include_usage: same text and usage as the plain call", () => {
    expect(probe.stream.content).toBe(probe.chat.content);
    expect(probe.stream.usage).toEqual(probe.chat.usage);
    expect(probe.stream.finish_reason).toBe("length");
    expect(probe.stream.chunks).toBeGreaterThan(2);
  });

  test("errors are the SDK's typed exceptions: unknown model BadRequestError, bad key AuthenticationError", () => {
    expect(probe.chat_unknown_model).toMatchObject({
      class: "BadRequestError",
      status: 400,
      code: "unknown_model",
    });
    expect(probe.bad_key).toMatchObject({
      class: "AuthenticationError",
      status: 401,
      code: "unauthorized",
      type: "authentication_error",
    });
  });
});
