import { describe, expect, test } from "bun:test";
import { countRows } from "../helpers/backend.ts";
import { makeTestApp } from "../helpers/context.ts";

async function setup() {
  const t = await makeTestApp();
  await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
  const chat = (path: string, key: string, body: Record<string, unknown> = {}) =>
    t.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({
        model: "sandbox/chat",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
        ...body,
      }),
    });
  const jobs = () => countRows(t.ctx.sql, "jobs");
  return { t, chat, jobs };
}

describe("chat Idempotency-Key: the contract's fingerprint rule", () => {
  test("the query counts like the path: the same key on another query is 409", async () => {
    const { chat, jobs } = await setup();
    expect((await chat("/v1/chat/completions", "q1")).status).toBe(200);
    const replay = await chat("/v1/chat/completions", "q1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const other = await chat("/v1/chat/completions?trace=1", "q1");
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("idempotency_conflict");
    expect(await jobs()).toBe(1);
  });

  test("two identical calls racing: one runs, the other is 409 while it runs, one job", async () => {
    const { chat, jobs } = await setup();
    const body = { sandbox: { delay_ms: 200 } };
    const [a, b] = await Promise.all([
      chat("/v1/chat/completions", "race", body),
      chat("/v1/chat/completions", "race", body),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(await jobs()).toBe(1);
    const after = await chat("/v1/chat/completions", "race", body);
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    expect(await after.text()).toBe(await (a.status === 200 ? a : b).text());
  });
});
