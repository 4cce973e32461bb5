import { afterAll, describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../../helpers/context.ts";
import { mockTextModel, startMockOpenAI } from "../../helpers/mock-openai.ts";

// Errors around the completion limit: they name the field the client sent, and only OpenAI's
// "unsupported max_tokens" 400 is asked again (once), never another refusal.

const mock = startMockOpenAI();
afterAll(() => mock.stop());
const t = await makeTestApp({
  providers: { mock: { type: "openai", base_url: mock.url } },
  models: ["o3-mini", "400"].map((n) => mockTextModel(n)),
});
await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
type Err = { error: { code: string; param?: string; message: string } };

const chat = (model: string, extra: Record<string, unknown>) =>
  t.request("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: `mock/${model}`, messages: [{ role: "user", content: "hi" }], ...extra }),
  });

describe("openai chat: completion limit errors", () => {
  test("max_completion_tokens over the context: 400 validation_error naming max_completion_tokens, nothing sent", async () => {
    const before = mock.requests.length;
    const res = await chat("o3-mini", { max_completion_tokens: 9000 });
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error).toMatchObject({
      code: "validation_error",
      param: "max_completion_tokens",
    });
    expect(mock.requests.length).toBe(before);
  });

  test("another 400 from the upstream is not asked again", async () => {
    const before = mock.requests.length;
    const res = await chat("400", { max_tokens: 4 });
    expect(res.status).toBe(502);
    expect(mock.requests.length).toBe(before + 1);
  });
});
