import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodePng } from "../../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../../helpers/api.ts";

/**
 * Issue 31, item 4: a sandbox job must not freeze the server. The heaviest request of each sandbox
 * kind the built-in catalog accepts (src/catalog/sandbox-models.ts `max`, the input schemas' size
 * limits of src/catalog/input-schemas.ts) runs while /healthz is polled every 50 ms; no answer may
 * take longer than a second. Before the encoders moved to a worker thread, four 8192 x 8192 PNGs
 * (1.4 s of CPU each, encoded in one synchronous loop) held every request for about 5.5 s.
 * A liveness check with a generous bound, not a timing assertion: a healthy server answers in
 * about a millisecond.
 */
type Json = Record<string, unknown>;
const BOUND_MS = 1000;
const POLL_MS = 50;

let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded("", "100");
});
afterAll(() => s.cleanup());

async function upload(bytes: Uint8Array): Promise<string> {
  const res = await s.fetch("/v1/files", {
    method: "POST",
    body: bytes,
    headers: { "content-type": "image/png" },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { file_id: string }).file_id;
}

describe("sandbox jobs run off the event loop", () => {
  test(
    "/healthz answers within a second while the heaviest request of every sandbox kind runs",
    async () => {
      // The upscaler's largest output: a 4000 x 4000 source at scale 2 is 8000 x 8000 (64 MP, its max).
      const source = await upload(encodePng(4000, 4000, 1));
      const portrait = await upload(encodePng(256, 256, 2));
      const heaviest: [string, Json][] = [
        ["sandbox/image", { prompt: "hills", num_images: 4, width: 8192, height: 8192 }],
        ["sandbox/upscale", { image_url: source, scale: 2 }],
        ["sandbox/speech", { text: "A long reading.", duration: 300 }],
        ["sandbox/avatar", { image_url: portrait, text: "Hello there.", duration: 60 }],
        ["sandbox/video", { prompt: "hills", duration: 10, resolution: "1080p" }],
      ];

      const slow: number[] = [];
      let polls = 0;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const started = performance.now();
          const res = await fetch(`${s.url}/healthz`);
          await res.arrayBuffer();
          const took = performance.now() - started;
          polls++;
          if (res.status !== 200 || took > BOUND_MS) slow.push(Math.round(took));
          await Bun.sleep(POLL_MS);
        }
      })();

      try {
        const ids: string[] = [];
        for (const [model, input] of heaviest) {
          const res = await s.post(`/v1/queue/${model}`, input);
          const body = (await res.json()) as Json;
          expect({ model, status: res.status, body }).toMatchObject({ status: 202 });
          ids.push(body.request_id as string);
        }
        for (const id of ids) {
          const rec = await pollUntil(
            async () => (await (await s.get(`/v1/requests/${id}/status`)).json()) as { status: string },
            (r) => r.status === "COMPLETED" || r.status === "FAILED",
            120_000,
          );
          expect(rec.status).toBe("COMPLETED");
        }
      } finally {
        polling = false;
        await poller;
      }
      expect(polls).toBeGreaterThan(10);
      expect(slow).toEqual([]);
    },
    { timeout: 180_000 },
  );
});
