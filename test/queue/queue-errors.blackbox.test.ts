import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollUntil, startFunded } from "../helpers/api.ts";

type Json = Record<string, any>;
let s: Awaited<ReturnType<typeof startFunded>>;
beforeAll(async () => {
  s = await startFunded("[limits]\nin_flight = 3\n");
});
afterAll(() => s.cleanup());
const held = async () => ((await (await s.get("/v1/account")).json()) as Json).held_micro as string;
const jobsCount = async () =>
  ((await (await s.get("/v1/requests?limit=100")).json()) as Json).data.length as number;

describe("bad submits: clear 4xx, nothing reserved or enqueued", () => {
  const cases: [string, string, unknown, number, string][] = [
    ["unknown model", "/v1/queue/acme/nope", { prompt: "x" }, 400, "unknown_model"],
    ["text model", "/v1/queue/sandbox/chat", { prompt: "x" }, 400, "use_chat_completions"],
    ["text model on run", "/v1/run/sandbox/chat", { prompt: "x" }, 400, "use_chat_completions"],
    ["missing required field", "/v1/queue/sandbox/image", { num_images: 1 }, 400, "validation_error"],
    ["unknown field", "/v1/queue/sandbox/image", { prompt: "x", colour: "red" }, 400, "validation_error"],
    ["wrong type", "/v1/queue/sandbox/image", { prompt: 5 }, 400, "validation_error"],
    ["negative units", "/v1/queue/sandbox/speech", { text: "x", duration: -3 }, 400, "validation_error"],
    ["huge units", "/v1/queue/sandbox/speech", { text: "x", duration: 1e12 }, 400, "validation_error"],
    ["over max", "/v1/queue/sandbox/video", { prompt: "x", duration: 11 }, 400, "validation_error"],
    [
      "unlisted resolution",
      "/v1/queue/sandbox/video",
      { prompt: "x", resolution: "8k" },
      400,
      "validation_error",
    ],
    ["body not an object", "/v1/queue/sandbox/image", [1, 2], 400, "validation_error"],
    ["malformed JSON", "/v1/queue/sandbox/image", '{"prompt": ', 400, "validation_error"],
    [
      "webhook to a private address",
      "/v1/queue/sandbox/image?webhook_url=http://127.0.0.1:9/x",
      { prompt: "x" },
      400,
      "bad_webhook_url",
    ],
    [
      "webhook not a URL",
      "/v1/queue/sandbox/image",
      { prompt: "x", webhook_url: "not a url" },
      400,
      "bad_webhook_url",
    ],
    [
      "webhook of another scheme",
      "/v1/queue/sandbox/image",
      { prompt: "x", webhook_url: "ftp://example.com/x" },
      400,
      "bad_webhook_url",
    ],
  ];
  test.each(cases)("%s", async (_label, path, body, status, code) => {
    const before = await jobsCount();
    const res = await s.post(path, body);
    expect(res.status).toBe(status);
    expect(((await res.json()) as Json).error.code).toBe(code);
    expect(await held()).toBe("0");
    expect(await jobsCount()).toBe(before);
  });

  test("a huge body is refused", async () => {
    const res = await s.post("/v1/queue/sandbox/image", { prompt: "x".repeat(200_000) });
    expect(res.status).toBe(400);
    expect(await held()).toBe("0");
  });
});

describe("ids and isolation", () => {
  test("non-UUID ids and path traversal are 400; unknown ids 404", async () => {
    for (const id of ["abc", "..%2F..%2Fetc%2Fpasswd", "00000000-0000-0000-0000-00000000000Z"]) {
      const res = await s.get(`/v1/requests/${id}`);
      expect(res.status).toBe(400);
    }
    expect((await s.get("/v1/requests/00000000-0000-7000-8000-000000000000/status")).status).toBe(404);
  });

  test("another account's request is 404 on every route", async () => {
    const q = (await (await s.post("/v1/queue/sandbox/image", { prompt: "mine" })).json()) as Json;
    const other = await fetch(`${s.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `other-${Date.now()}`, credit: "5" }),
    });
    const key = ((await other.json()) as Json).key as string;
    for (const [method, path] of [
      ["GET", `/v1/requests/${q.request_id}`],
      ["GET", `/v1/requests/${q.request_id}/status`],
      ["GET", `/v1/requests/${q.request_id}/response`],
      ["POST", `/v1/requests/${q.request_id}/cancel`],
    ] as const) {
      const res = await s.fetch(path, { method, key });
      expect(res.status).toBe(404);
    }
    const list = (await (await s.fetch("/v1/requests", { key })).json()) as Json;
    expect(list.data).toEqual([]);
  });

  test("every queue route needs a key", async () => {
    expect((await s.post("/v1/queue/sandbox/image", { prompt: "x" }, { key: null })).status).toBe(401);
    expect((await s.get("/v1/requests", { key: null })).status).toBe(401);
  });
});

describe("Idempotency-Key", () => {
  test("same key and body replays with 200 and Idempotent-Replayed; another body is 409", async () => {
    const headers = { "idempotency-key": `k-${Date.now()}` };
    const a = await s.post("/v1/queue/sandbox/image", { prompt: "same" }, { headers });
    expect(a.status).toBe(202);
    const first = (await a.json()) as Json;
    const b = await s.post("/v1/queue/sandbox/image", { prompt: "same" }, { headers });
    expect(b.status).toBe(200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(((await b.json()) as Json).request_id).toBe(first.request_id);
    const c = await s.post("/v1/queue/sandbox/image", { prompt: "different" }, { headers });
    expect(c.status).toBe(409);
    expect(((await c.json()) as Json).error.code).toBe("idempotency_conflict");
  });

  test("key order in the body does not matter", async () => {
    const headers = { "idempotency-key": `order-${Date.now()}` };
    const a = (await (
      await s.post("/v1/queue/sandbox/image", '{"prompt":"p","num_images":1}', { headers })
    ).json()) as Json;
    const b = await s.post("/v1/queue/sandbox/image", '{"num_images":1,"prompt":"p"}', { headers });
    expect(b.status).toBe(200);
    expect(((await b.json()) as Json).request_id).toBe(a.request_id);
  });

  test("two identical requests racing: exactly one job and one hold", async () => {
    await pollUntil(held, (h) => h === "0");
    const headers = { "idempotency-key": `race-${Date.now()}` };
    const before = await jobsCount();
    const body = { prompt: "race", sandbox: { delay_ms: 500 } };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => s.post("/v1/queue/sandbox/image", body, { headers })),
    );
    const ids = new Set<string>();
    for (const r of results) {
      expect([200, 202]).toContain(r.status);
      ids.add(((await r.json()) as Json).request_id);
    }
    expect(results.filter((r) => r.status === 202).length).toBe(1);
    expect(ids.size).toBe(1);
    expect(await jobsCount()).toBe(before + 1);
    expect(await held()).toBe("10000");
  });

  test("a bad Idempotency-Key is 400", async () => {
    const res = await s.post(
      "/v1/queue/sandbox/image",
      { prompt: "x" },
      { headers: { "idempotency-key": "has space" } },
    );
    expect(res.status).toBe(400);
  });
});

describe("in-flight cap", () => {
  test("the 4th open job of a key is 429 too_many_in_flight; reads still work", async () => {
    await pollUntil(held, (h) => h === "0");
    const slow = { prompt: "x", sandbox: { delay_ms: 1500 } };
    for (let i = 0; i < 3; i++) expect((await s.post("/v1/queue/sandbox/image", slow)).status).toBe(202);
    const res = await s.post("/v1/queue/sandbox/image", slow);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(((await res.json()) as Json).error.code).toBe("too_many_in_flight");
    expect((await s.get("/v1/requests")).status).toBe(200);
  });
});

describe("write rate", () => {
  test("over the per-minute write rate: 429 rate_limited with RateLimit headers; reads never count", async () => {
    const r = await startFunded("[limits]\nwrites_per_minute = 3\n");
    try {
      const ok = await r.post("/v1/estimate", { model_id: "sandbox/image" });
      expect(ok.headers.get("ratelimit-policy")).toBe('"writes";q=3;w=60');
      expect(ok.headers.get("ratelimit")).toMatch(/^"writes";r=2;t=\d+$/);
      for (let i = 0; i < 10; i++) expect((await r.get("/v1/account")).status).toBe(200);
      await r.post("/v1/estimate", { model_id: "sandbox/image" });
      await r.post("/v1/estimate", { model_id: "sandbox/image" });
      const limited = await r.post("/v1/queue/sandbox/image", { prompt: "x" });
      expect(limited.status).toBe(429);
      expect(((await limited.json()) as Json).error.code).toBe("rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(limited.headers.get("ratelimit")).toMatch(/^"writes";r=0;t=\d+$/);
      expect(limited.headers.get("ratelimit-policy")).toBe('"writes";q=3;w=60');
      expect((await r.get("/v1/requests")).status).toBe(200);
    } finally {
      r.cleanup();
    }
  });
});
