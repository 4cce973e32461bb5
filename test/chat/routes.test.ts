import { afterAll, describe, expect, test } from "bun:test";
import type { JobRow } from "../../src/queue/job-row.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";

/**
 * A text model on two OpenAI-compatible stand-ins (test/helpers/mock-openai.ts, after OpenAI's chat
 * completions protocol): the call goes to the second route only when the first refused it before
 * the reply's first byte, never after (docs/providers.md "Fallback").
 */
const one = startMockOpenAI();
const two = startMockOpenAI();
const text = (id: string, first: string, second: string) => ({
  id,
  kind: "text",
  input_price_usd_micro: 1_000_000,
  output_price_usd_micro: 2_000_000,
  context: 8192,
  routes: [
    { provider: "one", upstream_model: first, cost_input_usd_micro: 400_000, cost_output_usd_micro: 900_000 },
    {
      provider: "two",
      upstream_model: second,
      cost_input_usd_micro: 500_000,
      cost_output_usd_micro: 1_100_000,
    },
  ],
});
const t = await makeTestApp({
  models: [
    text("c/refused", "503", "ok"),
    text("c/limited", "429", "ok"),
    text("c/midstream", "midstream-error", "ok"),
    text("c/both", "503", "503"),
  ],
  providers: {
    one: { type: "openai", base_url: `${one.url}/v1` },
    two: { type: "openai", base_url: `${two.url}/v1` },
  },
});
await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
afterAll(() => {
  one.stop();
  two.stop();
});

const chat = (model: string, stream = false) =>
  t.request("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream, max_tokens: 5, messages: [{ role: "user", content: "Hi" }] }),
  });
const lastJob = async () => (await t.ctx.sql.all<JobRow>("SELECT * FROM jobs ORDER BY seq DESC LIMIT 1"))[0]!;

describe("chat routes", () => {
  test("503 from the first route before any byte: answered by the second, its route and cost on the call", async () => {
    const [a, b] = [one.requests.length, two.requests.length];
    const res = await chat("c/refused");
    expect(res.status).toBe(200);
    const body = await json<{ usage: { prompt_tokens: number; completion_tokens: number } }>(res);
    expect(one.requests.length).toBe(a + 1);
    expect(two.requests.length).toBe(b + 1);
    const job = await lastJob();
    expect(job).toMatchObject({ status: "COMPLETED", provider: "two", route: 1n });
    // The same usage the charge used, at the second route's per-1M costs, rounded half up.
    const { prompt_tokens: p, completion_tokens: c } = body.usage;
    const exact = p * 500_000 + c * 1_100_000;
    expect(job.cost_usd_micro).toBe(BigInt(Math.floor(exact / 1_000_000 + 0.5)));
  });

  test("429 from the first route, streamed: the reply comes from the second", async () => {
    const b = two.requests.length;
    const res = await chat("c/limited", true);
    expect(res.status).toBe(200);
    const sse = await res.text();
    expect(sse).toContain("[DONE]");
    expect(two.requests.length).toBe(b + 1);
    expect(await lastJob()).toMatchObject({ status: "COMPLETED", provider: "two" });
  });

  test("a failure after the first byte is the client's error; the second route gets no call", async () => {
    const b = two.requests.length;
    const res = await chat("c/midstream", true);
    const sse = await res.text();
    expect(sse).toContain('"error":{"code":"submit_failed"');
    expect(two.requests.length).toBe(b);
    expect(await lastJob()).toMatchObject({ status: "FAILED", provider: "one", cost_usd_micro: null });
  });

  test("the same, not streamed", async () => {
    const b = two.requests.length;
    const res = await chat("c/midstream");
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(two.requests.length).toBe(b);
  });

  test("every route refuses: 503 capacity_unavailable, nothing charged", async () => {
    const res = await chat("c/both");
    expect(res.status).toBe(503);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("capacity_unavailable");
    const job = await lastJob();
    expect(job.status).toBe("FAILED");
    expect((await t.ctx.ledger.getHold(job.hold_id))!.status).toBe("released");
  });
});
