import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { png } from "../providers/media-fixtures.ts";

/**
 * The OpenAI videos door's boundaries: another account's video or upload is 404 / unknown_file
 * (never 403: no enumeration), a job of another kind is no video, a key is required, and a form
 * cannot smuggle a second file or a prototype key.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let mine: OpenAI;
let theirs: OpenAI;
let theirVideo: string;
let theirFile: string;

beforeAll(async () => {
  s = await startFunded();
  mine = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey!, maxRetries: 0 });
  const created = await s.fetch("/admin/v1/accounts", {
    method: "POST",
    key: null,
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "other", credit: "10" }),
  });
  const other = (await created.json()) as { key: string };
  theirs = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: other.key, maxRetries: 0 });
  const v = await theirs.videos.create({ model: "sandbox/video", prompt: "theirs", seconds: "1" } as never);
  theirVideo = v.id;
  await pollUntil(
    () => theirs.videos.retrieve(theirVideo),
    (x) => x.status === "completed",
  );
  const up = await s.fetch("/v1/files", {
    method: "POST",
    key: other.key,
    headers: { "content-type": "image/png" },
    body: png(16, 16),
  });
  theirFile = ((await up.json()) as { file_id: string }).file_id;
});
afterAll(() => s?.cleanup());

const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenAI.APIError);
  return e as InstanceType<typeof OpenAI.APIError> & { error: { code: string } };
};

describe("another account's video is 404 on every route", () => {
  test("retrieve, content, delete: NotFoundError; and it is not listed", async () => {
    for (const call of [
      () => mine.videos.retrieve(theirVideo),
      () => mine.videos.downloadContent(theirVideo),
      () => mine.videos.delete(theirVideo),
    ]) {
      const e = await failure(call());
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect(e.error.code).toBe("not_found");
    }
    expect((await mine.videos.list()).data.map((v) => v.id)).not.toContain(theirVideo);
    // Their video is untouched by the refused delete.
    expect((await theirs.videos.retrieve(theirVideo)).status).toBe("completed");
    expect((await theirs.videos.downloadContent(theirVideo)).status).toBe(200);
  });

  test("their upload as input_reference is an unknown file, nothing held", async () => {
    const before = await (await s.get("/v1/account")).json();
    const e = await failure(
      mine.videos.create({
        model: "sandbox/video",
        prompt: "x",
        input_reference: { file_id: theirFile },
      } as never),
    );
    expect(e.status).toBe(400);
    expect(e.error.code).toBe("unknown_file");
    expect(await (await s.get("/v1/account")).json()).toEqual(before);
  });
});

describe("what is not a video", () => {
  test("an image request's id, a malformed id: 404; an image job is not listed", async () => {
    const q = (await (await s.post("/v1/queue/sandbox/image", { prompt: "cat" })).json()) as {
      request_id: string;
    };
    expect((await failure(mine.videos.retrieve(q.request_id))).status).toBe(404);
    expect((await failure(mine.videos.retrieve("video_68d7512d07848190b3e45da0ecbebcde"))).status).toBe(404);
    expect((await mine.videos.list()).data.map((v) => v.id)).not.toContain(q.request_id);
  });
});

describe("keys and forms", () => {
  test("no key or a bad key: AuthenticationError on every route", async () => {
    const anon = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: "gk_notakey", maxRetries: 0 });
    for (const call of [
      () => anon.videos.create({ model: "sandbox/video", prompt: "x" } as never),
      () => anon.videos.retrieve(theirVideo),
      () => anon.videos.list(),
      () => anon.videos.downloadContent(theirVideo),
      () => anon.videos.delete(theirVideo),
    ]) {
      const e = await failure(call());
      expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    }
  });

  test("a second file field, a __proto__ field: 400, nothing opened", async () => {
    const form = new FormData();
    form.append("model", "sandbox/video");
    form.append("prompt", "x");
    form.append("other", new Blob([png(8, 8)], { type: "image/png" }), "a.png");
    const two = await s.fetch("/v1/videos", { method: "POST", body: form });
    expect(two.status).toBe(400);
    const proto = new FormData();
    proto.append("model", "sandbox/video");
    proto.append("__proto__[polluted]", "yes");
    const p = await s.fetch("/v1/videos", { method: "POST", body: proto });
    expect(p.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const listed = (await (await s.get("/v1/requests")).json()) as { data: { model_id: string }[] };
    expect(listed.data.filter((r) => r.model_id === "sandbox/video")).toEqual([]);
  });
});
