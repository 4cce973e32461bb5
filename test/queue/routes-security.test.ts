import { afterAll, describe, expect, test } from "bun:test";
import { circuitFor } from "../../src/providers/circuit.ts";
import { ADMIN_TOKEN, finalJob, makeTestApp, submitQueued, testWorkerPool } from "../helpers/context.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";

/**
 * Clients never learn which upstream ran their job, nor that another refused it: no provider name,
 * upstream address or upstream model in a record, a status with its logs, an error body or a
 * chat answer. The route is the operator's (admin pages, logs, metrics).
 */
const alpha = startMockOpenAI();
const beta = startMockOpenAI();
alpha.echo = "upstream-secret-model-alpha";
beta.echo = "upstream-secret-model-beta";
const NAMES = /vendoralpha|vendorbeta|upstream-secret-model/;
const t = await makeTestApp({
  models: [
    {
      id: "s/img",
      kind: "image",
      price_usd_micro: 1000,
      max: 1,
      routes: [
        { provider: "vendoralpha", upstream_model: "echo-503", cost_usd_micro: 900 },
        { provider: "vendorbeta", upstream_model: "ok", cost_usd_micro: 800 },
      ],
    },
    {
      id: "s/fail",
      kind: "image",
      price_usd_micro: 1000,
      max: 1,
      routes: [
        { provider: "vendoralpha", upstream_model: "echo-503" },
        { provider: "vendorbeta", upstream_model: "echo-500" },
      ],
    },
    {
      id: "s/chat",
      kind: "text",
      input_price_usd_micro: 1000,
      output_price_usd_micro: 1000,
      context: 8192,
      routes: [
        { provider: "vendoralpha", upstream_model: "503" },
        { provider: "vendorbeta", upstream_model: "503" },
      ],
    },
  ],
  providers: {
    vendoralpha: { type: "openai", base_url: `${alpha.url}/v1` },
    vendorbeta: { type: "openai", base_url: `${beta.url}/v1` },
  },
});
await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
const pool = testWorkerPool(t.ctx);
afterAll(async () => {
  await pool.stop(1000);
  alpha.stop();
  beta.stop();
});

const clean = (text: string) => {
  expect(text).not.toMatch(NAMES);
  expect(text).not.toContain(alpha.url.replace("http://", ""));
  expect(text).not.toContain(beta.url.replace("http://", ""));
};
const read = async (path: string) => await (await t.request(path)).text();

describe("no upstream's name reaches a client", () => {
  test("a job moved to its second route: its record, status with logs and output name neither", async () => {
    const id = await submitQueued(t, "s/img", { prompt: "x" });
    const job = await finalJob(t.ctx, id);
    expect(job).toMatchObject({ status: "COMPLETED", provider: "vendorbeta" }); // the operator's record
    const logs = await read(`/v1/queue/s/img/requests/${id}/status?logs=1`);
    expect(logs).toContain("trying another upstream");
    clean(logs);
    clean(await read(`/v1/requests/${id}`));
    clean(await read(`/v1/queue/s/img/requests/${id}`));
    clean(await read("/v1/requests?limit=5"));
  });

  test("a job every route refused or failed: its error names no upstream", async () => {
    const id = await submitQueued(t, "s/fail", { prompt: "x" });
    const job = await finalJob(t.ctx, id);
    expect(job.status).toBe("FAILED");
    const record = await read(`/v1/requests/${id}`);
    expect(record).toContain("generation_failed");
    clean(record);
  });

  test("every circuit open: the 503 names no upstream", async () => {
    const circuits = ["vendoralpha", "vendorbeta"].map((n) => circuitFor(t.ctx.circuits, n));
    for (const c of circuits) for (let i = 0; i < 5; i++) c.failure();
    try {
      const res = await t.request("/v1/queue/s/img", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "x" }),
      });
      expect(res.status).toBe(503);
      clean(await res.text());
    } finally {
      for (const c of circuits) c.success();
    }
  });

  test("a chat call every route refused: the 503 names no upstream", async () => {
    const res = await t.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "s/chat", messages: [{ role: "user", content: "hi" }], max_tokens: 5 }),
    });
    expect(res.status).toBe(503);
    const body = await res.text();
    clean(body);
    expect((JSON.parse(body) as { error: { code: string } }).error.code).toBe("capacity_unavailable");
  });

  test("the operator API shows the route and its cost; a client's key cannot read it", async () => {
    const id = await submitQueued(t, "s/img", { prompt: "x" });
    await finalJob(t.ctx, id);
    const admin = await t.request(`/admin/v1/requests/${id}`, {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(admin.status).toBe(200);
    const body = (await admin.json()) as {
      route: unknown;
      account_id: string;
      record: { request_id: string };
    };
    expect(body.route).toEqual({ provider: "vendorbeta", index: 1, cost_usd_micro: "800" });
    expect(body.account_id).toBe(t.account.id);
    expect(body.record.request_id).toBe(id);
    // The client's own key is no operator token.
    expect((await t.request(`/admin/v1/requests/${id}`)).status).toBe(401);
    const unknown = await t.request("/admin/v1/requests/00000000-0000-7000-8000-000000000000", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(unknown.status).toBe(404);
  });
});
