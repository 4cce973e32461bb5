import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFunded } from "../helpers/api.ts";
import { runPythonProbe } from "../helpers/python-probe.ts";

/**
 * The official `openai` Python SDK against gengate's images and speech doors
 * (test/compat/openai_media_probe.py): images.generate (url and b64_json), images.edit with a file
 * tuple, audio.speech.create (openai-python src/openai/resources/images.py and audio/speech.py). The
 * interpreter is GENGATE_PYTHON (.ci/run sets it; `sh scripts/python-env` prints one); without it
 * these tests are skipped. The balance moves by exactly the four estimates, and four jobs are listed.
 */
const python = process.env.GENGATE_PYTHON;

interface Probe {
  sdk_version: string;
  created: number;
  url_png_size: number[];
  b64_png_sizes: number[][];
  edit_png_size: number[];
  speech: { content_type: string; head: string; size: number };
  mp3: { status: number; code: string; param: string; message: string } | null;
}

let s: Awaited<ReturnType<typeof startFunded>>;
let probe: Probe;
let probeError: string | null = null;
let charged = 0n;
let estimated = 0n;
let listed: string[] = [];

const balance = async () =>
  BigInt(((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro);

beforeAll(async () => {
  if (!python) return;
  s = await startFunded();
  for (const [model_id, input] of [
    ["sandbox/image", { prompt: "a red fox", width: 128, height: 64 }],
    ["sandbox/image", { prompt: "b64", num_images: 2, width: 64, height: 96 }],
    ["sandbox/image", { prompt: "add a hat", width: 96, height: 96 }],
    ["sandbox/speech", { text: "Hello from Python", voice: "alloy" }],
  ] as const) {
    const res = await s.post("/v1/estimate", { model_id, input });
    estimated += BigInt(((await res.json()) as { price_usd_micro: string }).price_usd_micro);
  }
  const before = await balance();
  const ran = await runPythonProbe<Probe>(python, "openai_media_probe.py", {
    GENGATE_BASE_URL: `${s.url}/v1`,
    GENGATE_KEY: s.defaultKey!,
  });
  probeError = ran.error;
  if (ran.probe) probe = ran.probe;
  charged = before - (await balance());
  listed = ((await (await s.get("/v1/requests")).json()) as { data: { model_id: string }[] }).data.map(
    (r) => r.model_id,
  );
}, 120_000);
afterAll(() => s?.cleanup());

describe.skipIf(!python)("the openai Python SDK: images and speech", () => {
  test("the probe ran to the end", () => {
    expect(probeError).toBeNull();
    expect(probe.sdk_version).toMatch(/^\d+\.\d+/);
  });

  test("images.generate: a link to a PNG of the asked size, and two b64_json PNGs", () => {
    expect(probe.created).toBeGreaterThan(1_700_000_000);
    expect(probe.url_png_size).toEqual([128, 64]);
    expect(probe.b64_png_sizes).toEqual([
      [64, 96],
      [64, 96],
    ]);
  });

  test("images.edit with a file tuple", () => {
    expect(probe.edit_png_size).toEqual([96, 96]);
  });

  test("audio.speech.create: WAV bytes; mp3 is BadRequestError naming wav", () => {
    expect(probe.speech.content_type).toBe("audio/wav");
    expect(probe.speech.head).toBe("RIFF");
    expect(probe.speech.size).toBeGreaterThan(44);
    expect(probe.mp3).toMatchObject({ status: 400, code: "validation_error", param: "response_format" });
    expect(probe.mp3!.message).toContain("wav");
  });

  test("charged exactly the four estimates; four jobs listed", () => {
    expect(charged).toBe(estimated);
    expect(listed.toSorted()).toEqual(["sandbox/image", "sandbox/image", "sandbox/image", "sandbox/speech"]);
  });
});
