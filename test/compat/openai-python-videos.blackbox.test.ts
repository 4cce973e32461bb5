import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesSource, measureMedia } from "../../src/providers/measure.ts";
import { startFunded } from "../helpers/api.ts";
import { runPythonProbe } from "../helpers/python-probe.ts";
import { tempDir } from "../helpers/server.ts";
import { png } from "../providers/media-fixtures.ts";

/**
 * The official `openai` Python SDK's videos (resources/videos.py: create, create_and_poll, poll,
 * retrieve, download_content, list, delete) against gengate's OpenAI videos door, driven by
 * openai_videos_probe.py. Skipped unless GENGATE_PYTHON names an interpreter with `openai`
 * installed (`sh scripts/python-env` prints one; .ci/run sets it).
 */
const python = process.env.GENGATE_PYTHON;
type Json = Record<string, any>;
let s: Awaited<ReturnType<typeof startFunded>>;
let probe: Json;
let probeError: string | null = null;
const dir = tempDir();
const video = join(dir, "out.webm");

beforeAll(async () => {
  if (!python) return;
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  writeFileSync(join(dir, "fox.png"), png(48, 32));
  const ran = await runPythonProbe<Json>(python, "openai_videos_probe.py", {
    GENGATE_BASE_URL: `${s.url}/v1`,
    GENGATE_KEY: s.defaultKey!,
    GENGATE_PNG: join(dir, "fox.png"),
    GENGATE_OUT: video,
  });
  probeError = ran.error;
  if (ran.probe) probe = ran.probe;
}, 120_000);
afterAll(() => s?.cleanup());

describe.skipIf(!python)("the openai Python SDK's videos against gengate", () => {
  test("the probe ran to the end", () => {
    expect(probeError).toBeNull();
  });

  test("create_and_poll: completed, the ledger moved by the estimate; download_content: a WebM of 2 s", async () => {
    expect(probe.polled).toMatchObject({
      object: "video",
      status: "completed",
      progress: 100,
      model: "sandbox/video",
      seconds: "2",
      size: "1280x720",
      error: null,
    });
    const m = measureMedia(bytesSource(new Uint8Array(readFileSync(video))));
    expect(m.duration).toBeCloseTo(2, 1);
    const est = (await (
      await s.post("/v1/estimate", {
        model_id: "sandbox/video",
        input: { duration: 2, resolution: "720p", aspect_ratio: "16:9" },
      })
    ).json()) as Json;
    const rec = (await (await s.get(`/v1/requests/${probe.polled.id}`)).json()) as Json;
    expect(rec.price.charged_usd_micro).toBe(est.price_usd_micro);
    const listed = (await (await s.get("/v1/requests")).json()) as { data: Json[] };
    expect(listed.data.map((r) => r.request_id)).toContain(probe.polled.id);
  });

  test("input_reference as a file tuple: stored as the key's upload, the model's image_url", async () => {
    const rec = (await (await s.get(`/v1/requests/${probe.with_reference.id}`)).json()) as Json;
    expect(rec.input.image_url).toMatch(/^file_/);
    expect(rec.status).toBe("COMPLETED");
  });

  test("delete of a queued video: deleted, then failed with error cancelled, nothing charged", async () => {
    expect(probe.queued.status).toBe("queued");
    expect(probe.deleted).toEqual({ id: probe.queued.id, object: "video.deleted", deleted: true });
    expect(probe.after_delete).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    const rec = (await (await s.get(`/v1/requests/${probe.queued.id}`)).json()) as Json;
    expect(rec.price.charged_usd_micro).toBe("0");
  });

  test("list walks every video, newest first; errors are the SDK's typed exceptions", () => {
    expect(probe.listed.length).toBe(4);
    expect(probe.listed[probe.listed.length - 1]).toBe(probe.polled.id);
    expect(probe.bad_size).toEqual({ class: "BadRequestError", status: 400, code: "validation_error" });
    expect(probe.unknown).toEqual({ class: "NotFoundError", status: 404, code: "not_found" });
  });
});
