import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollUntil, startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";

const mock = startMockOpenAI();
let s: Awaited<ReturnType<typeof startFunded>>;
const media = (id: string, kind: string, upstream: string, extra = "") =>
  `[[models]]\nid = "${id}"\nkind = "${kind}"\nprovider = "oa"\nupstream_model = "${upstream}"\nprice_usd_micro = 1000\nmax = 30\n${extra}`;
beforeAll(async () => {
  process.env.OA_UPSTREAM_KEY = "sk-very-secret-upstream-key";
  s = await startFunded(
    [
      `[providers.oa]\ntype = "openai"\nbase_url = "${mock.url}"\napi_key_env = "OA_UPSTREAM_KEY"\n`,
      media("oa/img", "image", "ok"),
      media("oa/img-urls", "image", "urls"),
      media("oa/img-big-urls", "image", "big-urls"),
      media("oa/img-400", "image", "400"),
      media("oa/img-garbage", "image", "garbage"),
      media("oa/tts", "audio", "tts"),
    ].join("\n"),
  );
});
afterAll(() => {
  s.cleanup();
  mock.stop();
});
type Json = Record<string, any>;
const run = async (model: string, body: unknown) => {
  const q = (await (await s.post(`/v1/queue/${model}`, body)).json()) as Json;
  return pollUntil(
    async () => (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as Json,
    (r) => ["COMPLETED", "FAILED"].includes(r.status),
  );
};

describe("openai media provider through the gateway", () => {
  test("images (b64) are stored and served from the gateway", async () => {
    const r = await run("oa/img", { prompt: "a fox", num_images: 2 });
    expect(r.status).toBe("COMPLETED");
    expect(r.output_urls.length).toBe(2);
    const png = await fetch(r.output_urls[0]);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(mock.requests.at(-1)!.body).toMatchObject({
      model: "ok",
      prompt: "a fox",
      n: 2,
      response_format: "b64_json",
    });
    expect(mock.requests.at(-1)!.authorization).toBe("Bearer sk-very-secret-upstream-key");
  });

  test("image URLs from the upstream are copied into the store before COMPLETED", async () => {
    const r = await run("oa/img-urls", { prompt: "x" });
    expect(r.status).toBe("COMPLETED");
    expect(r.output_urls[0]).toStartWith(`${s.url}/v1/requests/`);
    expect((await fetch(r.output_urls[0])).status).toBe(200);
  });

  test("a large output link (17 MiB) is measured in a worker thread, from the binary too (issue 31)", async () => {
    // measureFileAsync sends files over 16 MiB to src/entries/measure-file.ts: were the worker
    // script missing (from the compiled binary), storing the output would fail the job.
    const r = await run("oa/img-big-urls", { prompt: "x" });
    expect(r.status).toBe("COMPLETED");
    const out = (await (await s.get(`/v1/requests/${r.request_id}/response`)).json()) as Json;
    expect(out.images[0]).toMatchObject({ width: 16, height: 16 });
    const file = await fetch(r.output_urls[0]);
    expect(file.headers.get("content-length")).toBe(String(17 * 1024 * 1024));
  });

  test("speech: a WAV, charged for its real duration when shorter than requested", async () => {
    const r = await run("oa/tts", { text: "hello", duration: 10 });
    expect(r.status).toBe("COMPLETED");
    expect(r.price.quoted_usd_micro).toBe("10000");
    expect(r.price.charged_usd_micro).toBe("2000"); // the upstream's WAV lasts 2 s
  });

  test("an upstream 400 fails the job with our message (its own in the server's log) and releases the hold", async () => {
    const r = await run("oa/img-400", { prompt: "x" });
    expect(r.status).toBe("FAILED");
    expect(r.error.message).toBe("The upstream refused the call.");
    expect(s.output()).toContain("prompt rejected by safety system");
    expect(r.price.charged_usd_micro).toBe("0");
  });

  test("an answer that is not what the protocol promises fails cleanly", async () => {
    const r = await run("oa/img-garbage", { prompt: "x" });
    expect(r.status).toBe("FAILED");
    expect(r.error.message).toContain("malformed");
  });

  test("the upstream key never appears in records, errors, logs or the OpenAPI schema", async () => {
    const list = await (await s.get("/v1/requests?limit=100")).text();
    const spec = await (await fetch(`${s.url}/v1/openapi.json`)).text();
    const providers = await (
      await fetch(`${s.url}/admin/v1/providers`, { headers: { authorization: `Bearer ${s.adminToken}` } })
    ).text();
    for (const text of [list, spec, providers, s.output()])
      expect(text).not.toContain("sk-very-secret-upstream-key");
    expect(JSON.parse(providers).data[0]).toMatchObject({ name: "oa", type: "openai", healthy: true });
  });
});

describe("config errors fail at start with a message naming the entry", () => {
  test.each([
    ['[providers.x]\ntype = "midjourney"\nbase_url = "http://127.0.0.1:1"\n', "providers.x.type"],
    [
      '[[models]]\nid = "a/b"\nkind = "image"\nprovider = "nope"\nprice_usd_micro = 1\nmax = 1\n',
      'models[0] (a/b).provider: no provider "nope"',
    ],
    [
      '[providers.x]\ntype = "fal"\nbase_url = "http://127.0.0.1:1"\n[[models]]\nid = "a/b"\nkind = "text"\nprovider = "x"\ninput_price_usd_micro = 1\noutput_price_usd_micro = 1\ncontext = 10\n',
      "a fal provider does not serve text models",
    ],
    [
      '[providers.x]\ntype = "openai"\nbase_url = "http://127.0.0.1:1"\napi_key_env = "NOT_SET_ANYWHERE_42"\n',
      "providers.x.api_key_env: environment variable NOT_SET_ANYWHERE_42 is not set",
    ],
  ])("%s", async (toml, message) => {
    const { runGengate, tempDir } = await import("../helpers/server.ts");
    const dir = tempDir();
    await Bun.write(`${dir}/c.toml`, toml);
    const r = await runGengate([
      "serve",
      "--config",
      `${dir}/c.toml`,
      "--data-dir",
      `${dir}/d`,
      "--port",
      "0",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});
