import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifyWebhook } from "../../src/webhooks/signing.ts";
import { pollUntil, startFunded } from "../helpers/api.ts";

type Hit = { headers: Record<string, string>; body: string };
const hits: Hit[] = [];
const status = 200;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    hits.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
    return new Response("", { status });
  },
});
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded('[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n');
});
afterAll(() => {
  s.cleanup();
  receiver.stop(true);
});
const hook = `http://127.0.0.1:${receiver.port}/hook`;

describe("webhooks through the queue", () => {
  test("one signed POST with the full record when the job completes, visible on the record", async () => {
    const q = (await (
      await s.post(`/v1/queue/sandbox/image?webhook_url=${encodeURIComponent(hook)}`, { prompt: "x" })
    ).json()) as {
      request_id: string;
    };
    const hit = await pollUntil(
      async () => hits.find((h) => h.body.includes(q.request_id)),
      (h) => h !== undefined,
    );
    const secret = ((await (await s.get("/v1/account/webhook-secret")).json()) as { secret: string }).secret;
    expect(() => verifyWebhook(secret, hit!.headers, hit!.body)).not.toThrow();
    const body = JSON.parse(hit!.body) as {
      status: string;
      request_id: string;
      output_urls: string[];
      price: { charged_usd_micro: string };
    };
    expect(body).toMatchObject({ status: "COMPLETED", request_id: q.request_id });
    expect(body.output_urls.length).toBe(1);
    expect(body.price.charged_usd_micro).toBe("10000");
    expect(hit!.headers["webhook-id"]).toContain(q.request_id);
    const rec = await pollUntil(
      async () =>
        (await (await s.get(`/v1/requests/${q.request_id}`)).json()) as {
          webhook: { status: string; attempts: number };
        },
      (r) => r.webhook.status === "delivered",
    );
    expect(rec.webhook).toMatchObject({ url: hook, status: "delivered", attempts: 1 });
    expect(hits.filter((h) => h.body.includes(q.request_id)).length).toBe(1);
  });

  test("a FAILED job notifies too (webhook_url in the body)", async () => {
    const failed = (await (
      await s.post("/v1/queue/sandbox/image", { prompt: "x", webhook_url: hook, sandbox: { fail: true } })
    ).json()) as {
      request_id: string;
    };
    const hit = await pollUntil(
      async () => hits.find((h) => h.body.includes(failed.request_id)),
      (h) => h !== undefined,
    );
    expect(JSON.parse(hit!.body).status).toBe("FAILED");
  });

  test("without the allow-list a private receiver is refused at submit", async () => {
    const plain = await startFunded("");
    try {
      const res = await plain.post(`/v1/queue/sandbox/image?webhook_url=${encodeURIComponent(hook)}`, {
        prompt: "x",
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("bad_webhook_url");
    } finally {
      plain.cleanup();
    }
  });
});
