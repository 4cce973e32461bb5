import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp } from "../../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../../helpers/mock-openai.ts";

// The completion limit goes upstream under the name the model takes: OpenAI's o-series and GPT-5
// refuse max_tokens (the mock answers their 400 as the API does) and get max_completion_tokens;
// other models get the name the client used. Either name reserves the same way.

const mock = startMockOpenAI();
afterAll(() => mock.stop());
const t = await makeTestApp({
  providers: { mock: { type: "openai", base_url: mock.url } },
  models: ["ok", "o3-mini", "gpt-5-mini", "refuses-max-tokens"].map((n) => mockTextModel(n)),
});
await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);

type Completion = { choices: { message: { content: string }; finish_reason: string }[] };
async function chat(model: string, limit: Record<string, number>) {
  const before = mock.requests.length;
  const res = await t.request("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: `mock/${model}`, messages: [{ role: "user", content: "hi" }], ...limit }),
  });
  return { res, sent: mock.requests.slice(before).map((r) => r.body) };
}

describe("openai chat: the completion limit's name", () => {
  test("o3-mini, client sends max_tokens: upstream gets max_completion_tokens, the reply is limited", async () => {
    const { res, sent } = await chat("o3-mini", { max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ max_completion_tokens: 5 });
    expect(sent[0]).not.toHaveProperty("max_tokens");
    const body = (await res.json()) as Completion;
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.choices[0]!.message.content).toBe("Hello from the mock upstream");
  });

  test("gpt-5-mini without a limit: max_completion_tokens with the reserved default", async () => {
    const { res, sent } = await chat("gpt-5-mini", {});
    expect(res.status).toBe(200);
    expect(sent[0]).toMatchObject({ max_completion_tokens: 4096 });
    expect(sent[0]).not.toHaveProperty("max_tokens");
  });

  test("another model: the name the client used, max_tokens when it sent none", async () => {
    expect((await chat("ok", { max_completion_tokens: 3 })).sent[0]).toMatchObject({
      max_completion_tokens: 3,
    });
    const classic = (await chat("ok", { max_tokens: 3 })).sent[0]!;
    expect(classic).toMatchObject({ max_tokens: 3 });
    expect(classic).not.toHaveProperty("max_completion_tokens");
    expect((await chat("ok", {})).sent[0]).toMatchObject({ max_tokens: 4096 });
  });

  test("a model the pattern does not know that refuses max_tokens: asked once more with max_completion_tokens", async () => {
    const { res, sent } = await chat("refuses-max-tokens", { max_tokens: 2 });
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ max_tokens: 2 });
    expect(sent[1]).toMatchObject({ max_completion_tokens: 2 });
    expect(sent[1]).not.toHaveProperty("max_tokens");
  });

  test("max_completion_tokens reserves like max_tokens: the hold is the prompt plus that limit", async () => {
    const { res } = await chat("o3-mini", { max_completion_tokens: 1000 });
    expect(res.status).toBe(200);
    const rows = await t.ctx.sql.all<{ quote: string }>(
      "SELECT quote FROM jobs ORDER BY created_at DESC LIMIT 1",
    );
    expect(JSON.parse(rows[0]!.quote)).toMatchObject({ output_tokens: 1000 });
  });
});
