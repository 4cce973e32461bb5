/**
 * The official `replicate` JS client (1.4.0) pointed at gengate: `new Replicate({auth, baseUrl})`.
 * What it sends and reads: node_modules/replicate/index.js (run, wait, paginate, request),
 * lib/predictions.js (create with Prefer: wait, get, cancel, list), lib/util.js (validateWebhook).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Replicate, { type Page, validateWebhook } from "replicate";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";

type Prediction = {
  id: string;
  model: string;
  version: string;
  status: string;
  output: unknown;
  error: string | null;
  logs?: string;
  metrics: { predict_time?: number; total_time?: number };
  urls: { get: string; cancel: string };
  data_removed: boolean;
  source: string;
};

const hits: { headers: Headers; body: string }[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    hits.push({ headers: req.headers, body: await req.text() });
    return new Response("");
  },
});
let s: Awaited<ReturnType<typeof startFunded>>;
let replicate: Replicate;
/** Every request the client sent, as "METHOD path". */
const sent: string[] = [];
beforeAll(async () => {
  s = await startFunded(
    '[queue]\nconcurrency = { sandbox = 1 }\n[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n',
  );
  replicate = new Replicate({
    auth: s.defaultKey!,
    baseUrl: `${s.url}/v1`,
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      sent.push(`${init?.method ?? "GET"} ${url.pathname}`);
      return fetch(input, init);
    }) as typeof fetch,
  });
});
afterAll(() => {
  s.cleanup();
  void receiver.stop(true);
});

const balance = async () =>
  (await (await s.get("/v1/account")).json()) as { balance_micro: string; held_micro: string };
const estimate = async (model_id: string, input: unknown) =>
  BigInt(
    ((await (await s.post("/v1/estimate", { model_id, input })).json()) as { price_usd_micro: string })
      .price_usd_micro,
  );
const PNG = [0x89, 0x50, 0x4e, 0x47];

describe("replicate JS client against gengate", () => {
  test("run with a Blob and a Buffer input: uploaded through Replicate's files API, read by the job from the store", async () => {
    const png = encodePng(96, 64, 3);
    for (const image of [new Blob([png], { type: "image/png" }), Buffer.from(png)]) {
      const before = await balance();
      const output = (await replicate.run("sandbox/upscale", {
        input: { image_url: image, scale: 2 },
      })) as unknown;
      const links = (Array.isArray(output) ? output : [output]).map(String);
      expect(links).toHaveLength(1);
      const id = /\/v1\/requests\/([0-9a-f-]{36})\/output\/0/.exec(links[0]!)?.[1];
      const job = (await (await s.get(`/v1/requests/${id}`)).json()) as {
        status: string;
        input: { image_url: string; scale: number };
      };
      // The client put the file's urls.get in the input; the job holds the account's file id.
      expect(job.status).toBe("COMPLETED");
      expect(job.input.image_url).toMatch(/^file_[0-9A-Za-z]{24}$/);
      const file = (await (await s.get(`/v1/files/${job.input.image_url}`)).json()) as { width: number };
      expect(file.width).toBe(96);
      const after = await balance();
      expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(
        await estimate("sandbox/upscale", job.input),
      );
    }
    expect(sent.filter((r) => r === "POST /v1/files")).toHaveLength(2);
  });

  test("run: an image model's output is a list of links to a PNG; charged exactly the estimate", async () => {
    const input = { prompt: "a fox", width: 64, height: 64 };
    const price = await estimate("sandbox/image", input);
    const before = await balance();
    const seen: Prediction[] = [];
    const output = (await replicate.run("sandbox/image", { input }, (p) =>
      seen.push(p as Prediction),
    )) as string[];
    // Over http:// the client gives the URL strings (it makes FileOutput only of https: and data:).
    expect(output.length).toBe(1);
    const png = new Uint8Array(await (await fetch(output[0]!)).arrayBuffer());
    expect([...png.slice(0, 4)]).toEqual(PNG);
    // One blocking create answered the output (Prefer: wait), no polling.
    expect(sent.filter((l) => l.startsWith("GET /v1/predictions/")).length).toBe(0);
    const id = seen[0]!.id;
    expect(seen.at(-1)).toMatchObject({ status: "succeeded", model: "sandbox/image", source: "api" });
    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(price);
    expect(after.held_micro).toBe(before.held_micro);
    const listed = (await (await s.get("/v1/requests")).json()) as { data: { request_id: string }[] };
    expect(listed.data.map((r) => r.request_id)).toContain(id);
  });

  test("run with owner/name:version (the client sends the version alone)", async () => {
    const created = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "v" },
    })) as Prediction;
    expect(created.version).toMatch(/^[0-9a-f]{64}$/);
    const output = (await replicate.run(`sandbox/image:${created.version}`, {
      input: { prompt: "v2" },
    })) as string[];
    expect(output.length).toBe(1);
    await replicate.wait(created as never, { interval: 50 });
  });

  test("predictions.create, wait, get: a speech model's output is one link; the same job in /v1/requests", async () => {
    const input = { text: "hello", duration: 2 };
    const price = await estimate("sandbox/speech", input);
    const before = await balance();
    const created = (await replicate.predictions.create({ model: "sandbox/speech", input })) as Prediction;
    expect(created.status).toBe("starting");
    expect(created.urls.get).toBe(`${s.url}/v1/predictions/${created.id}`);
    const done = (await replicate.wait(created as never, { interval: 50 })) as Prediction;
    expect(done.status).toBe("succeeded");
    expect(typeof done.output).toBe("string");
    const wav = await fetch(done.output as string);
    expect(wav.headers.get("content-type")).toContain("audio/wav");
    expect(done.metrics.predict_time).toBeGreaterThanOrEqual(0);
    expect(done.metrics.total_time).toBeGreaterThanOrEqual(done.metrics.predict_time!);
    const got = (await replicate.predictions.get(created.id)) as Prediction;
    expect(got).toMatchObject({ id: created.id, status: "succeeded", data_removed: false, error: null });
    expect(typeof got.logs).toBe("string");
    const record = (await (await s.get(`/v1/requests/${created.id}`)).json()) as {
      status: string;
      price: { charged_usd_micro: string };
    };
    expect(record.status).toBe("COMPLETED");
    expect(BigInt(record.price.charged_usd_micro)).toBe(price);
    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(price);
  });

  test("cancel of a queued prediction: canceled, its hold released, nothing charged", async () => {
    const before = await balance();
    const slow = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "slow", sandbox: { delay_ms: 1500 } },
    })) as Prediction;
    const queued = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "q" },
    })) as Prediction;
    const canceled = (await replicate.predictions.cancel(queued.id)) as Prediction;
    expect(canceled).toMatchObject({ id: queued.id, status: "canceled", output: null });
    expect(((await replicate.predictions.get(queued.id)) as Prediction).status).toBe("canceled");
    await replicate.wait(slow as never, { interval: 50 });
    const price = await estimate("sandbox/image", { prompt: "slow", sandbox: { delay_ms: 1500 } });
    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(price);
    expect(after.held_micro).toBe(before.held_micro);
  });

  test("list and paginate: the account's predictions newest first, next pages by URL", async () => {
    const page = (await replicate.predictions.list()) as { results: Prediction[]; next: string | null };
    expect(page.results.length).toBeGreaterThanOrEqual(5);
    const pages: Prediction[][] = [];
    for await (const p of replicate.paginate(() =>
      replicate
        .request("/predictions?limit=2", { method: "GET" })
        .then(async (r) => (await r.json()) as Page<Prediction>),
    ))
      pages.push(p as Prediction[]);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]!.length).toBe(2);
    const ids = pages.flat().map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(page.results.map((p) => p.id).slice(0, ids.length));
    expect([...ids].sort().reverse()).toEqual(ids);
  });

  test("Prefer: wait answers a short job done, and a long one in progress after n seconds", async () => {
    const t0 = Date.now();
    const short = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "short" },
      wait: 5,
    })) as Prediction;
    expect(short.status).toBe("succeeded");
    expect((short.output as string[]).length).toBe(1);
    const long = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "long", sandbox: { delay_ms: 3000 } },
      wait: 1,
    })) as Prediction;
    const took = Date.now() - t0;
    expect(long.status).toBe("starting");
    expect(took).toBeLessThan(2900);
    expect(took).toBeGreaterThanOrEqual(1000);
    const done = (await replicate.wait(long as never, { interval: 100 })) as Prediction;
    expect(done.status).toBe("succeeded");
  });

  test("Idempotency-Key: a repeat opens nothing and answers the same prediction, as it is now", async () => {
    const before = await balance();
    const create = (prefer: Record<string, string>) =>
      replicate.request("/models/sandbox/image/predictions", {
        method: "POST",
        headers: { "Idempotency-Key": "rep-once", ...prefer },
        data: { input: { prompt: "once" } },
      });
    const first = await create({});
    const a = (await first.json()) as Prediction;
    expect(first.status).toBe(201);
    const again = await create({ Prefer: "wait=10" });
    const b = (await again.json()) as Prediction;
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(b).toMatchObject({ id: a.id, status: "succeeded" });
    const listed = (await (await s.get("/v1/requests?limit=100")).json()) as {
      data: { request_id: string }[];
    };
    expect(listed.data.filter((r) => r.request_id === a.id).length).toBe(1);
    const after = await balance();
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(
      await estimate("sandbox/image", { prompt: "once" }),
    );
    // Another body under the same key is the contract's 409.
    const other = await replicate
      .request("/models/sandbox/image/predictions", {
        method: "POST",
        headers: { "Idempotency-Key": "rep-once" },
        data: { input: { prompt: "other" } },
      })
      .catch((e: { response: Response }) => e.response);
    expect(other.status).toBe(409);
  });

  test("stream: replicate.stream reads the signed urls.stream without its key: output events, then done", async () => {
    const events: { event: string; data: string }[] = [];
    for await (const e of replicate.stream("sandbox/image", { input: { prompt: "streamed", num_images: 2 } }))
      events.push(e as { event: string; data: string });
    expect(events.map((e) => e.event)).toEqual(["output", "output", "done"]);
    const png = new Uint8Array(await (await fetch(events[0]!.data)).arrayBuffer());
    expect([...png.slice(0, 4)]).toEqual(PNG);
    // The stream link is the capability: without its signature it is 403 in Replicate's shape.
    const p = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "s" },
    })) as Prediction & {
      urls: { stream: string };
    };
    const unsigned = await fetch(p.urls.stream.replace(/sig=[^&]+/, "sig=AAAA"));
    expect(unsigned.status).toBe(403);
    expect(((await unsigned.json()) as { code: string }).code).toBe("forbidden");
    const failed = replicate.stream("sandbox/image", { input: { prompt: "boom", sandbox: { fail: true } } });
    let error: unknown;
    try {
      for await (const _ of failed);
    } catch (e) {
      error = e;
    }
    expect(String(error)).toContain("fail");
    await replicate.wait(p as never, { interval: 50 });
  });

  test("webhook: the prediction body, signed so validateWebhook accepts it", async () => {
    const hook = `http://127.0.0.1:${receiver.port}/hook`;
    const created = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "hook" },
      webhook: hook,
      webhook_events_filter: ["completed"],
    })) as Prediction;
    const hit = await pollUntil(
      async () => hits.find((h) => h.body.includes(created.id)),
      (h) => h !== undefined,
    );
    const body = JSON.parse(hit!.body) as Prediction;
    expect(body).toMatchObject({ id: created.id, status: "succeeded", model: "sandbox/image" });
    expect((body.output as string[]).length).toBe(1);
    const { key } = (await replicate.webhooks.default.secret.get()) as { key: string };
    expect(await validateWebhook({ headers: hit!.headers, body: hit!.body } as never, key)).toBe(true);
    expect(await validateWebhook({ headers: hit!.headers, body: `${hit!.body} ` } as never, key)).toBe(false);
    // The request record shows the URL as it was given.
    const record = await pollUntil(
      async () =>
        (await (await s.get(`/v1/requests/${created.id}`)).json()) as {
          webhook: { url: string; status: string };
        },
      (r) => r.webhook.status === "delivered",
    );
    expect(record.webhook.url).toBe(hook);
  });

  test("a webhook_events_filter without completed sends no webhook", async () => {
    const created = (await replicate.predictions.create({
      model: "sandbox/image",
      input: { prompt: "no hook" },
      webhook: `http://127.0.0.1:${receiver.port}/hook`,
      webhook_events_filter: ["start"],
      wait: 10,
    })) as Prediction;
    expect(created.status).toBe("succeeded");
    const record = (await (await s.get(`/v1/requests/${created.id}`)).json()) as { webhook: unknown };
    expect(record.webhook).toBeNull();
  });
});
