import { heapStats } from "bun:jsc";
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp } from "../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";

// A chat call's signals are released when the call ends (src/chat/service.ts endCall). Each call
// derives signals from its own AbortController: the model's time limit (AbortSignal.timeout inside
// AbortSignal.any) and the provider's upstream timeout. A timeout signal another signal depends on
// stays alive until it fires, so before endCall every call kept about 3.5 KB for the model's time
// limit (ten minutes by default): memory grew with the call rate, gigabytes under sustained load.

const mock = startMockOpenAI();
afterAll(() => mock.stop());

function liveSignals(): number {
  Bun.gc(true);
  return heapStats().objectTypeCounts.AbortSignal ?? 0;
}

async function setup() {
  const t = await makeTestApp({
    providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
    models: ["ok", "400"].map((name) => mockTextModel(name, { time_limit_seconds: 3600 })),
  });
  await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  const chat = async (name: string, stream: boolean) => {
    const res = await t.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: `mock/${name}`, messages: [{ role: "user", content: "hi" }], stream }),
    });
    await res.text();
    return res.status;
  };
  return { chat };
}

// Under the default write rate (60 a minute per key).
const CALLS = 50;

describe("a chat call's signals end with the call", () => {
  test.each([false, true])("answered calls (stream: %p) leave no signal behind", async (stream) => {
    const { chat } = await setup();
    expect(await chat("ok", stream)).toBe(200); // warm: lazily created long-lived signals
    const before = liveSignals();
    for (let i = 0; i < CALLS; i++) expect(await chat("ok", stream)).toBe(200);
    // Before the fix: one to three per call (49-152 more for 50 calls).
    expect(liveSignals() - before).toBeLessThan(CALLS / 2);
  });

  test("failed calls (the upstream refused the input) leave no signal behind either", async () => {
    const { chat } = await setup();
    expect(await chat("400", false)).toBe(502);
    const before = liveSignals();
    for (let i = 0; i < CALLS; i++) expect(await chat("400", false)).toBe(502);
    expect(liveSignals() - before).toBeLessThan(CALLS / 2);
  });
});
