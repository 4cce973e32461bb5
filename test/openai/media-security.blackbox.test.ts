import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIError, toFile } from "openai";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";

/**
 * OpenAI's images and speech doors and other people's things: files and jobs of another account,
 * URLs a client chose, keys, links, and the Idempotency-Key (a replay is the same job, charged once).
 */
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;
let otherKey = "";
/** Webhook bodies received on loopback (allowed for this server by [webhooks] allow_private_cidrs). */
const hooks: { request_id: string; status: string }[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (req) => {
    hooks.push((await req.json()) as { request_id: string; status: string });
    return new Response("ok");
  },
});

beforeAll(async () => {
  s = await startFunded('[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n');
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
  const other = await fetch(`${s.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "other", credit: "5" }),
  });
  otherKey = ((await other.json()) as { key: string }).key;
});
afterAll(() => {
  s?.cleanup();
  void receiver.stop(true);
});

const balance = async () =>
  ((await (await s.get("/v1/account")).json()) as { balance_micro: string }).balance_micro;
const pngBytes = () => Buffer.from(encodePng(32, 32, 1));

function editForm(image: Blob | string, extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.set("model", "sandbox/image");
  form.set("prompt", "x");
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  if (typeof image === "string") form.set("image", image);
  else form.set("image", image, "a.png");
  return form;
}

async function jobOf(res: Response, key?: string) {
  const id = res.headers.get("x-gengate-request-id")!;
  expect(id).toBeTruthy();
  return await s.fetch(`/v1/requests/${id}`, key === undefined ? {} : { key });
}

describe("files of an edit", () => {
  test("another account's file id as the image: 400 unknown_file, nothing charged", async () => {
    const up = await s.fetch("/v1/files", {
      method: "POST",
      key: otherKey,
      body: pngBytes(),
      headers: { "content-type": "image/png" },
    });
    const theirs = ((await up.json()) as { file_id: string }).file_id;
    const before = await balance();
    const res = await s.fetch("/v1/images/edits", { method: "POST", body: editForm(theirs) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unknown_file");
    expect(await balance()).toBe(before);
  });

  test("an own file id works; a URL as the image is refused, never fetched", async () => {
    const up = await s.fetch("/v1/files", {
      method: "POST",
      body: pngBytes(),
      headers: { "content-type": "image/png" },
    });
    const mine = ((await up.json()) as { file_id: string }).file_id;
    const ok = await s.fetch("/v1/images/edits", { method: "POST", body: editForm(mine) });
    expect(ok.status).toBe(200);
    const record = (await (await jobOf(ok)).json()) as { input: { image_url: string } };
    expect(record.input.image_url).toBe(mine);
    const url = await s.fetch("/v1/images/edits", {
      method: "POST",
      body: editForm("http://169.254.169.254/latest/meta-data"),
    });
    expect(url.status).toBe(400);
    expect(((await url.json()) as { error: { param: string } }).error.param).toBe("image");
  });

  test("the uploaded parts are files of the caller's account: the other account cannot read them or the job", async () => {
    const res = await s.fetch("/v1/images/edits", {
      method: "POST",
      body: editForm(new Blob([pngBytes()], { type: "image/png" })),
    });
    expect(res.status).toBe(200);
    const record = (await (await jobOf(res)).json()) as { input: { image_url: string } };
    const fileId = record.input.image_url;
    expect(fileId).toMatch(/^file_/);
    expect((await s.fetch(`/v1/files/${fileId}`)).status).toBe(200);
    expect((await s.fetch(`/v1/files/${fileId}`, { key: otherKey })).status).toBe(404);
    expect((await jobOf(res, otherKey)).status).toBe(404);
  });

  test("bytes that are not an image, labelled image/png: 415, nothing charged", async () => {
    const before = await balance();
    const err = await client.images
      .edit({
        model: "sandbox/image",
        prompt: "x",
        image: await toFile(Buffer.from("<html>not a png</html>"), "a.png", { type: "image/png" }),
      })
      .catch((e: unknown) => e as APIError);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(415);
    expect(await balance()).toBe(before);
  });
});

describe("keys and links", () => {
  test("no key and a wrong key: 401 in OpenAI's shape", async () => {
    for (const path of ["/v1/images/generations", "/v1/audio/speech", "/v1/images/edits"]) {
      const none = await s.post(path, { model: "sandbox/image", prompt: "x" }, { key: null });
      expect(none.status).toBe(401);
      expect(((await none.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
    const bad = new OpenAI({ apiKey: "gk_wrong", baseURL: `${s.url}/v1`, maxRetries: 0 });
    const err = await bad.images.generate({ model: "sandbox/image", prompt: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  test("an answered link is signed: it downloads without a key; altered, it does not", async () => {
    const r = await client.images.generate({ model: "sandbox/image", prompt: "x", size: "64x64" });
    const url = r.data![0]!.url!;
    expect((await fetch(url)).status).toBe(200);
    const altered = url.replace(/sig=[^&]+/, "sig=AAAA");
    expect((await fetch(altered)).status).not.toBe(200);
  });
});

describe("Idempotency-Key", () => {
  test("the same key and body: the same job answered again, charged once; another body: 409", async () => {
    const headers = { "idempotency-key": `img-${crypto.randomUUID()}` };
    const body = { model: "sandbox/image", prompt: "once", size: "64x64", response_format: "b64_json" };
    const before = BigInt(await balance());
    const first = await s.post("/v1/images/generations", body, { headers });
    const again = await s.post("/v1/images/generations", body, { headers });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-gengate-request-id")).toBe(first.headers.get("x-gengate-request-id"));
    const a = (await first.json()) as { data: { b64_json: string }[] };
    const b = (await again.json()) as { data: { b64_json: string }[] };
    expect(b.data).toEqual(a.data);
    expect(before - BigInt(await balance())).toBe(10_000n); // sandbox/image: one image, once
    const conflict = await s.post("/v1/images/generations", { ...body, prompt: "other" }, { headers });
    expect(conflict.status).toBe(409);
  });

  test("speech: a replay answers the same audio", async () => {
    const headers = { "idempotency-key": `tts-${crypto.randomUUID()}` };
    const body = { model: "sandbox/speech", input: "again", voice: "alloy" };
    const first = await s.post("/v1/audio/speech", body, { headers });
    const again = await s.post("/v1/audio/speech", body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(Buffer.from(await again.arrayBuffer()).equals(Buffer.from(await first.arrayBuffer()))).toBe(true);
  });
});

describe("webhook_url (a gengate extra body field)", () => {
  test("the job's webhook is sent like any submit's; a URL the policy refuses is 400 bad_webhook_url", async () => {
    const res = await s.post("/v1/audio/speech", {
      model: "sandbox/speech",
      input: "hook",
      voice: "alloy",
      webhook_url: `http://127.0.0.1:${receiver.port}/hook`,
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-gengate-request-id");
    await pollUntil(
      async () => hooks.find((h) => h.request_id === id),
      (h) => h !== undefined,
    );
    expect(hooks.find((h) => h.request_id === id)!.status).toBe("COMPLETED");
    const refused = await s.post("/v1/images/generations", {
      model: "sandbox/image",
      prompt: "x",
      webhook_url: "ftp://example.com/hook",
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("bad_webhook_url");
  });
});
