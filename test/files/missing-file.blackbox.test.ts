import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { startFunded } from "../helpers/api.ts";

let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded();
});
afterAll(() => s.cleanup());

type Json = Record<string, unknown>;

/** The access-log line of the response with this x-request-id. */
async function accessLine(id: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const line = s
      .output()
      .split("\n")
      .find((l) => l.includes(`"msg":"request"`) && l.includes(`"id":"${id}"`));
    if (line) return JSON.parse(line) as Json;
    await Bun.sleep(20);
  }
  throw new Error(`no access log line for ${id}`);
}

async function expectInternalError(res: Response) {
  expect(res.status).toBe(500);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: Json };
  expect(body.error).toMatchObject({ code: "internal_error", type: "server_error" });
  const id = res.headers.get("x-request-id")!;
  expect(id).toMatch(/^req_/);
  expect(await accessLine(id)).toMatchObject({ status: 500 });
  // The error itself is one JSON line under the same id.
  expect(s.output()).toMatch(
    new RegExp(`"level":"error","msg":"stored file missing or damaged","id":"${id}"`),
  );
}

describe("a stored file whose bytes are gone on disk", () => {
  test("output download: the contract's JSON 500, logged with its real status, not counted", async () => {
    const run = await s.post("/v1/run/sandbox/image", { prompt: "x", num_images: 1 });
    expect(run.status).toBe(200);
    const requestId = run.headers.get("x-fal-request-id")!;
    const rec = (await (await s.get(`/v1/requests/${requestId}`)).json()) as { output_urls: string[] };
    rmSync(join(s.dataDir, "files", "outputs", requestId, "0"));

    await expectInternalError(await fetch(rec.output_urls[0]!)); // signed link
    await expectInternalError(await s.get(`/v1/requests/${requestId}/output/0`)); // owning key
    await expectInternalError(
      await fetch(rec.output_urls[0]!, { headers: { range: "bytes=0-9" } }), // a range too
    );
    expect(s.stderr()).toBe("");
  });

  test("upload content: the same", async () => {
    const up = (await (
      await s.fetch("/v1/files", {
        method: "POST",
        body: encodePng(20, 20, 3),
        headers: { "content-type": "image/png" },
      })
    ).json()) as { file_id: string };
    rmSync(join(s.dataDir, "files", "uploads", up.file_id));
    await expectInternalError(await s.get(`/v1/files/${up.file_id}/content`));
    // The metadata is still there: the row is live, only the bytes are gone.
    expect((await s.get(`/v1/files/${up.file_id}`)).status).toBe(200);
    expect(s.stderr()).toBe("");
  });
});
