import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { bytesSource, measureMedia } from "../../src/providers/measure.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { png } from "../providers/media-fixtures.ts";

/**
 * The official `openai` JS SDK (node_modules/openai/resources/videos.js) against gengate's
 * OpenAI videos door: videos.create sends multipart/form-data (multipartFormRequestOptions),
 * retrieve/list/delete JSON, downloadContent GET .../content with Accept: application/binary; the
 * list is a ConversationCursorPage (data, has_more, last_id -> ?after=). One sandbox worker, so a
 * slow video keeps the next one queued.
 */
type Json = Record<string, any>;
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;

beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
  client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey!, maxRetries: 0 });
});
afterAll(() => s?.cleanup());

const balance = async () =>
  (await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string };
const estimate = async (input: Json) =>
  (
    (await (await s.post("/v1/estimate", { model_id: "sandbox/video", input })).json()) as {
      price_usd_micro: string;
    }
  ).price_usd_micro;
/** A 1 s video of the default size, once completed. */
async function completedVideo(prompt: string) {
  const v = await client.videos.create({ model: "sandbox/video" as never, prompt, seconds: "1" as never });
  await until(v.id, ["completed"]);
  return v;
}
const until = (id: string, statuses: string[]) =>
  pollUntil(
    () => client.videos.retrieve(id),
    (v) => statuses.includes(v.status),
    30_000,
  );

describe("openai JS: videos.create -> retrieve -> downloadContent", () => {
  test("a 2 s 1280x720 video: the object, a real WebM of 2 s, the ledger moved by the estimate", async () => {
    const price = await estimate({
      prompt: "a red fox",
      duration: 2,
      resolution: "720p",
      aspect_ratio: "16:9",
    });
    const before = await balance();
    const created = await client.videos.create({
      model: "sandbox/video" as never,
      prompt: "a red fox",
      seconds: "2" as never,
      size: "1280x720",
    });
    expect(created).toMatchObject({
      object: "video",
      status: "queued",
      progress: 0,
      model: "sandbox/video",
      prompt: "a red fox",
      seconds: "2",
      size: "1280x720",
      completed_at: null,
      error: null,
      remixed_from_video_id: null,
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(60);

    const done = await until(created.id, ["completed", "failed"]);
    expect(done).toMatchObject({ status: "completed", progress: 100, error: null, seconds: "2" });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(done.expires_at).toBeGreaterThan(done.completed_at!);

    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(BigInt(price));
    expect(after.held_micro).toBe(before.held_micro);

    const res = await client.videos.downloadContent(created.id);
    expect(res.headers.get("content-type")).toBe("video/webm");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0x1a, 0x45, 0xdf, 0xa3]); // EBML
    const m = measureMedia(bytesSource(bytes));
    expect(m.known).toBe(true);
    expect(m.duration).toBeCloseTo(2, 1);

    // One job, many views: the same id is the native request.
    const rec = (await (await s.get(`/v1/requests/${created.id}`)).json()) as Json;
    expect(rec).toMatchObject({ request_id: created.id, model_id: "sandbox/video", status: "COMPLETED" });
    expect(rec.input).toEqual({ prompt: "a red fox", duration: 2, resolution: "720p", aspect_ratio: "16:9" });
    expect(rec.price.charged_usd_micro).toBe(price);
    const listed = (await (await s.get("/v1/requests")).json()) as { data: Json[] };
    expect(listed.data.map((r) => r.request_id)).toContain(created.id);
  });

  test("a Range of the content is 206 and the bytes of that range", async () => {
    const v = await completedVideo("range");
    const whole = new Uint8Array(await (await client.videos.downloadContent(v.id)).arrayBuffer());
    const part = await s.get(`/v1/videos/${v.id}/content`, { headers: { range: "bytes=0-99" } });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(whole.subarray(0, 100));
    // Defaults: the model's default tier (480p) at 16:9, its default_units (5 s).
    expect(v).toMatchObject({ size: "854x480", seconds: "1" });
  });

  test('seconds "3s" (a form gengate accepts) and an image input_reference sent as a file', async () => {
    const v = await client.videos.create({
      model: "sandbox/video" as never,
      prompt: "from a picture",
      seconds: "3s" as never,
      input_reference: await toFile(png(64, 48), "fox.png", { type: "image/png" }),
    });
    expect(v.seconds).toBe("3");
    const rec = (await (await s.get(`/v1/requests/${v.id}`)).json()) as Json;
    expect(rec.input.image_url).toMatch(/^file_[0-9A-Za-z]{24}$/);
    expect(rec.input.duration).toBe(3);
    const file = await s.get(`/v1/files/${rec.input.image_url}`);
    expect(file.status).toBe(200);
    expect(((await file.json()) as Json).content_type).toBe("image/png");
    await until(v.id, ["completed"]);
  });
});

describe("an avatar model through the same door", () => {
  test("prompt is what it says, input_reference the portrait; charged its estimate", async () => {
    const before = await balance();
    const v = await client.videos.create({
      model: "sandbox/avatar" as never,
      prompt: "hello there",
      seconds: "2" as never,
      input_reference: await toFile(png(64, 64), "face.png", { type: "image/png" }),
    });
    expect(v).toMatchObject({ model: "sandbox/avatar", prompt: "hello there", seconds: "2", size: null });
    const rec = (await (await s.get(`/v1/requests/${v.id}`)).json()) as Json;
    expect(rec.input).toEqual({
      text: "hello there",
      duration: 2,
      image_url: expect.stringMatching(/^file_/),
    });
    const price = (
      (await (await s.post("/v1/estimate", { model_id: "sandbox/avatar", input: rec.input })).json()) as {
        price_usd_micro: string;
      }
    ).price_usd_micro;
    await until(v.id, ["completed"]);
    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(BigInt(price));
    const bytes = new Uint8Array(await (await client.videos.downloadContent(v.id)).arrayBuffer());
    expect(measureMedia(bytesSource(bytes)).duration).toBeCloseTo(2, 1);
  });
});

describe("a JSON body (as a hand-written client sends it)", () => {
  test("input_reference as {file_id} of the account's own upload: the model's image_url", async () => {
    const up = await s.fetch("/v1/files", {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: png(32, 32),
    });
    const fileId = ((await up.json()) as { file_id: string }).file_id;
    const res = await s.post("/v1/videos", {
      model: "sandbox/video",
      prompt: "json",
      seconds: 1,
      size: "720x1280",
      input_reference: { file_id: fileId },
    });
    expect(res.status).toBe(200);
    const v = (await res.json()) as Json;
    expect(v).toMatchObject({ object: "video", status: "queued", seconds: "1", size: "720x1280" });
    const rec = (await (await s.get(`/v1/requests/${v.id}`)).json()) as Json;
    expect(rec.input).toEqual({
      prompt: "json",
      duration: 1,
      resolution: "720p",
      aspect_ratio: "9:16",
      image_url: fileId,
    });
    await until(v.id, ["completed"]);
  });
});

describe("openai JS: videos.list and videos.delete", () => {
  test("list: OpenAI's cursor page over the account's videos, newest first, auto-paginated", async () => {
    const page = await client.videos.list({ limit: 2 });
    expect(page.data.length).toBe(2);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const v of client.videos.list({ limit: 2 })) all.push(v.id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect([...all].sort().reverse()).toEqual(all);
    const asc = await client.videos.list({ order: "asc", limit: 100 });
    expect(asc.data.map((v) => v.id)).toEqual([...all].reverse());
    for (const v of asc.data)
      if (v.status === "completed") expect(v.expires_at).toBeGreaterThan(v.completed_at!);
    const raw = (await (await s.get("/v1/videos?limit=1")).json()) as Json;
    expect(raw).toMatchObject({ object: "list", first_id: all[0], last_id: all[0], has_more: true });
  });

  test("delete of a queued video: cancelled, its hold released, nothing charged; it reads as failed", async () => {
    // One worker: a slow video runs, so the next one waits queued.
    const slow = await client.videos.create({
      model: "sandbox/video" as never,
      prompt: "slow",
      seconds: "1" as never,
      sandbox: { delay_ms: 1500 },
    } as never);
    await until(slow.id, ["in_progress"]);
    const before = await balance();
    const queued = await client.videos.create({
      model: "sandbox/video" as never,
      prompt: "waits",
      seconds: "4" as never,
    });
    expect(queued.status).toBe("queued");
    const held = await balance();
    expect(BigInt(held.held_micro) - BigInt(before.held_micro)).toBe(BigInt(await estimate({ duration: 4 })));

    const deleted = await client.videos.delete(queued.id);
    expect(deleted).toEqual({ id: queued.id, object: "video.deleted", deleted: true });
    expect(await balance()).toEqual(before);
    const gone = await client.videos.retrieve(queued.id);
    expect(gone.status).toBe("failed");
    expect(gone.error?.code).toBe("cancelled");
    const rec = (await (await s.get(`/v1/requests/${queued.id}`)).json()) as Json;
    expect(rec.status).toBe("CANCELLED");
    expect(rec.price.charged_usd_micro).toBe("0");
    await until(slow.id, ["completed"]);
  });

  test("delete of a completed video removes its stored file: the content is then 404", async () => {
    const v = await completedVideo("short");
    expect((await client.videos.delete(v.id)).deleted).toBe(true);
    const err = await client.videos.downloadContent(v.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("the door is documented", () => {
  test("the OpenAPI document lists its five routes; /v1/llms.txt has its section", async () => {
    const doc = (await (await s.get("/v1/openapi.json", { key: null })).json()) as { paths: Json };
    expect(Object.keys(doc.paths["/v1/videos"])).toEqual(expect.arrayContaining(["post", "get"]));
    expect(Object.keys(doc.paths["/v1/videos/{id}"])).toEqual(expect.arrayContaining(["get", "delete"]));
    expect(Object.keys(doc.paths["/v1/videos/{id}/content"])).toEqual(["get"]);
    const llms = await (await s.get("/v1/llms.txt", { key: null })).text();
    expect(llms).toContain("## OpenAI videos");
    expect(llms).toContain("/videos/{id}/content");
  });
});
