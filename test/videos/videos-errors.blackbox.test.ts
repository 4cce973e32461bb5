import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { withServerSql } from "../helpers/server.ts";
import { png } from "../providers/media-fixtures.ts";

/**
 * The OpenAI videos door's refusals, as the real `openai` JS SDK raises them: its typed errors
 * (node_modules/openai/core/error.js: BadRequestError 400, PermissionDeniedError 403, NotFoundError
 * 404, ConflictError 409, RateLimitError 429; other statuses APIError) read `error.code`,
 * `error.param` and `error.message` from the contract's body. The account holds $0.50, so a 10 s
 * 1080p video ($0.80) is 402; uploads are capped at 64 KiB.
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;

beforeAll(async () => {
  s = await startFunded(
    "[queue]\nconcurrency = { sandbox = 1 }\n[limits]\nupload_max_bytes = 65536\n",
    "0.50",
  );
  client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.defaultKey!, maxRetries: 0 });
});
afterAll(() => s?.cleanup());

type Fields = Record<string, unknown>;
const create = (body: Fields) =>
  client.videos.create({ model: "sandbox/video", prompt: "x", ...body } as never);
const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenAI.APIError);
  return e as InstanceType<typeof OpenAI.APIError> & { error: { code: string; param?: string } };
};
const balance = async () => (await (await s.get("/v1/account")).json()) as Fields;

describe("bad input: 400 in OpenAI's shape with gengate's code, nothing held", () => {
  test("seconds not a number, or above the model's max", async () => {
    const before = await balance();
    const bad = await failure(create({ seconds: "four" }));
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatchObject({ code: "validation_error", param: "seconds" });
    const long = await failure(create({ seconds: "12" }));
    expect(long.error).toMatchObject({ code: "validation_error", param: "seconds" });
    expect(long.message).toContain("from 1 to 10");
    expect(await balance()).toEqual(before);
  });

  test("a size the model cannot make names the ones it can", async () => {
    const e = await failure(create({ size: "1792x1024" }));
    expect(e.status).toBe(400);
    expect(e.error).toMatchObject({ code: "validation_error", param: "size" });
    for (const size of ["854x480", "480x854", "1280x720", "720x1280", "1920x1080", "1080x1920"])
      expect(e.message).toContain(size);
    expect((await failure(create({ size: "big" }))).error.param).toBe("size");
  });

  test("the model: missing, unknown, a text model, an image model", async () => {
    const missing = await failure(client.videos.create({ prompt: "x" }));
    expect(missing.error).toMatchObject({ code: "validation_error", param: "model" });
    const unknown = await failure(create({ model: "sora-2" }));
    expect(unknown.error).toMatchObject({ code: "unknown_model", param: "model" });
    const text = await failure(create({ model: "sandbox/chat" }));
    expect(text.error).toMatchObject({ code: "use_chat_completions", param: "model" });
    expect(text.message).toContain("/v1/chat/completions");
    const image = await failure(create({ model: "sandbox/image" }));
    expect(image.status).toBe(400);
    expect(image.message).toContain("/v1/images/generations");
  });

  test("a field the model does not take, and a body that is neither JSON nor a form", async () => {
    const e = await failure(create({ colour: "red" }));
    expect(e.error).toMatchObject({ code: "validation_error", param: "input.colour" });
    const raw = await s.post("/v1/videos", "{not json");
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: Fields }).error.code).toBe("validation_error");
  });

  test("input_reference: not an image (415), too large (413), an unknown file id (400)", async () => {
    const text = await failure(
      create({ input_reference: await toFile(Buffer.from("hello"), "a.txt", { type: "text/plain" }) }),
    );
    expect(text.status).toBe(415);
    const big = new Uint8Array(70_000);
    big.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const large = await failure(
      create({ input_reference: await toFile(big, "big.png", { type: "image/png" }) }),
    );
    expect(large.status).toBe(413);
    const unknown = await failure(create({ input_reference: { file_id: "file_000000000000000000000000" } }));
    expect(unknown.error.code).toBe("unknown_file");
  });
});

describe("money and state", () => {
  test("402 names the billing page; nothing is held, and the input_reference sent is not kept", async () => {
    const before = await balance();
    const e = await failure(
      create({
        seconds: "10",
        size: "1920x1080",
        input_reference: await toFile(png(32, 32), "f.png", { type: "image/png" }),
      }),
    );
    expect(e.status).toBe(402);
    expect(e.error.code).toBe("insufficient_balance");
    expect(e.message).toContain("/console/billing");
    expect(await balance()).toEqual(before);
    const live = await withServerSql(s.dataDir, (sql) =>
      sql.get<{ n: number | bigint }>("SELECT count(*) AS n FROM files WHERE deleted_at IS NULL"),
    );
    expect(Number(live!.n)).toBe(0);
  });

  test("content before the video completes: 409 request_not_ready; deleting it while it runs: 409", async () => {
    const v = await create({ seconds: "1", sandbox: { delay_ms: 1500 } });
    const early = await failure(client.videos.downloadContent(v.id));
    expect(early).toBeInstanceOf(OpenAI.ConflictError);
    expect(early.error.code).toBe("request_not_ready");
    await pollUntil(
      () => client.videos.retrieve(v.id),
      (x) => x.status === "in_progress",
    );
    const running = await failure(client.videos.delete(v.id));
    expect(running).toBeInstanceOf(OpenAI.ConflictError);
    expect(running.error.code).toBe("not_cancellable");
    await pollUntil(
      () => client.videos.retrieve(v.id),
      (x) => x.status === "completed",
    );
    const thumb = await failure(client.videos.downloadContent(v.id, { variant: "thumbnail" }));
    expect(thumb).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("a failed generation reads failed with its error, and is not charged", async () => {
    const before = await balance();
    const v = await create({ seconds: "1", sandbox: { fail: true } });
    const done = await pollUntil(
      () => client.videos.retrieve(v.id),
      (x) => x.status === "failed",
    );
    expect(done.error?.message).toContain("asked to fail");
    expect(done.error?.code).toBeTruthy();
    expect((await balance()).balance_micro).toBe(before.balance_micro);
  });

  // openai-node sets no idempotency header of its own (client.ts: idempotencyHeader is never set), so
  // a caller sends Idempotency-Key as a request header.
  test("the same Idempotency-Key: the same video again; with another body: 409 idempotency_conflict", async () => {
    const first = await create({ seconds: "1" });
    const again = await client.videos.create({ model: "sandbox/video", prompt: "x", seconds: "1" } as never, {
      headers: { "Idempotency-Key": "video-once-1" },
    });
    const replay = await client.videos.create(
      { model: "sandbox/video", prompt: "x", seconds: "1" } as never,
      {
        headers: { "Idempotency-Key": "video-once-1" },
      },
    );
    expect(replay.id).toBe(again.id);
    expect(replay.id).not.toBe(first.id);
    const other = await failure(
      client.videos.create({ model: "sandbox/video", prompt: "y", seconds: "1" } as never, {
        headers: { "Idempotency-Key": "video-once-1" },
      }),
    );
    expect(other.error.code).toBe("idempotency_conflict");
  });
});
