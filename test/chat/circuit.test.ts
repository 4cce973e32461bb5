import { afterAll, describe, expect, test } from "bun:test";
import { circuitFor } from "../../src/providers/circuit.ts";
import { makeTestApp } from "../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";

const mock = startMockOpenAI();
afterAll(() => mock.stop());

async function setup() {
  const t = await makeTestApp({
    providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
    models: ["ok", "503", "400"].map((name) => mockTextModel(name)),
  });
  await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
  const chat = (name: string) =>
    t.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: `mock/${name}`,
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 8,
      }),
    });
  return { t, chat, circuit: circuitFor(t.ctx.circuits, "mock") };
}

describe("chat calls feed their upstream's circuit breaker", () => {
  test("upstream failures open it: the next call is 503 before anything is reserved", async () => {
    const { t, chat, circuit } = await setup();
    for (let i = 0; i < 5; i++) expect((await chat("503")).status).toBe(503);
    expect(circuit.view()).toMatchObject({ state: "open" });
    const refused = await chat("ok");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      "Nothing was reserved",
    );
    expect((await t.ctx.accounts.getAccount(t.account.id))!.held_micro).toBe(0n);
  });

  test("the caller's own bad input does not count; an answer closes the count", async () => {
    const { chat, circuit } = await setup();
    for (let i = 0; i < 6; i++) expect((await chat("400")).status).toBe(502);
    expect(circuit.view()).toMatchObject({ state: "closed", consecutive_failures: 0 });
    for (let i = 0; i < 4; i++) await chat("503");
    expect(circuit.view()).toMatchObject({ consecutive_failures: 4 });
    expect((await chat("ok")).status).toBe(200);
    expect(circuit.view()).toMatchObject({ state: "closed", consecutive_failures: 0 });
  });
});
