import { describe, expect, test } from "bun:test";
import { JSON_BODY_MAX } from "../../src/http/body-limit.ts";
import { makeTestApp } from "../helpers/context.ts";

/**
 * The Messages door's security: keys (x-api-key as Anthropic's SDKs send it), accounts kept apart,
 * hostile bodies refused in Anthropic's error shape (never a 500), nothing held for a refused call.
 */
const t = await makeTestApp();
await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
const other = await t.ctx.accounts.createAccount("other", "USD");
await t.ctx.ledger.topUp(other.account.id, 10_000_000n, null);

/** A request as Anthropic's SDK sends it: the key in x-api-key, anthropic-version set. */
const send = (
  path: string,
  body: string | object,
  headers: Record<string, string> = { "x-api-key": t.key },
) =>
  t.request(path, {
    method: "POST",
    key: null,
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const ok = { model: "sandbox/chat", max_tokens: 5, messages: [{ role: "user", content: "hi" }] };
const available = async (accountId: string) => {
  const a = (await t.ctx.accounts.getAccount(accountId))!;
  return a.balance_micro - a.held_micro;
};
/** Anthropic's error body with gengate's code; never a 500. */
async function anthropicError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { type: string; error: { type: string; code: string; message: string } };
  expect(body.type).toBe("error");
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  return body.error;
}

describe("Messages door: keys", () => {
  test("x-api-key alone works; anthropic-version is accepted and ignored", async () => {
    expect((await send("/v1/messages", ok)).status).toBe(200);
    expect(
      (await send("/v1/messages", ok, { "x-api-key": t.key, "anthropic-version": "1999-01-01" })).status,
    ).toBe(200);
  });

  test("no key, a wrong key, or two different keys: 401 authentication_error, nothing held", async () => {
    const before = await available(t.account.id);
    const keyings: Record<string, string>[] = [
      {},
      { "x-api-key": "gk_not_a_key" },
      { "x-api-key": t.key, authorization: `Bearer ${other.key}` },
      { "x-api-key": other.key, authorization: `Key ${t.key}` },
    ];
    for (const headers of keyings) {
      for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
        const e = await anthropicError(await send(path, ok, headers), 401, "unauthorized");
        expect(e.type).toBe("authentication_error");
      }
    }
    expect(await available(t.account.id)).toBe(before);
  });
});

describe("Messages door: accounts kept apart", () => {
  test("another account's key cannot see the job, in the record or the list", async () => {
    const res = await send("/v1/messages", ok);
    const id = ((await res.json()) as { id: string }).id.slice("msg_".length);
    expect((await t.request(`/v1/requests/${id}`)).status).toBe(200);
    expect((await t.request(`/v1/requests/${id}`, { key: other.key })).status).toBe(404);
    const theirs = (await (await t.request("/v1/requests", { key: other.key })).json()) as {
      data: { request_id: string }[];
    };
    expect(theirs.data.some((r) => r.request_id === id)).toBe(false);
  });

  test("an Idempotency-Key is the key's own: another account's same key and body is its own call", async () => {
    const headers = { "idempotency-key": `shared-${crypto.randomUUID()}` };
    const mine = await send("/v1/messages", ok, { "x-api-key": t.key, ...headers });
    const before = await available(other.account.id);
    const theirs = await send("/v1/messages", ok, { "x-api-key": other.key, ...headers });
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    const [a, b] = [(await mine.json()) as { id: string }, (await theirs.json()) as { id: string }];
    expect(b.id).not.toBe(a.id);
    expect(await available(other.account.id)).toBeLessThan(before);
  });
});

describe("Messages door: hostile bodies are refused in Anthropic's shape, never a 500", () => {
  test("a body over the JSON limit: 413 request_too_large", async () => {
    const big = JSON.stringify({ ...ok, messages: [{ role: "user", content: "x".repeat(JSON_BODY_MAX) }] });
    const e = await anthropicError(await send("/v1/messages", big), 413, "payload_too_large");
    expect(e.type).toBe("request_too_large");
  });

  test("nesting past the limit, malformed JSON, a forbidden key, a non-object body: 400", async () => {
    const nested = `{"model": "sandbox/chat", "max_tokens": 5, "metadata": ${"[".repeat(100)}${"]".repeat(100)}, "messages": []}`;
    for (const body of [nested, "{not json", '{"__proto__": {"x": 1}}', "[1, 2]", '"text"', "null"]) {
      for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
        const res = await send(path, body);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { type: string }).type).toBe("error");
      }
    }
  });

  test("too many messages, odd content and system shapes: 400 bad_messages, nothing held", async () => {
    const before = await available(t.account.id);
    const bodies = [
      { ...ok, messages: Array.from({ length: 3000 }, () => ({ role: "user", content: "x" })) },
      { ...ok, messages: [{ role: "user", content: { type: "text", text: "x" } }] },
      { ...ok, messages: [{ role: "user", content: [{ type: "text", text: { deep: [1, [2, [3]]] } }] }] },
      { ...ok, messages: [{ role: "user", content: [null] }] },
      { ...ok, messages: [{ role: "user", content: [] }] },
      { ...ok, messages: ["hi"] },
      { ...ok, system: 42 },
      { ...ok, system: [{ type: "image", source: {} }] },
    ];
    for (const body of bodies) await anthropicError(await send("/v1/messages", body), 400, "bad_messages");
    expect(await available(t.account.id)).toBe(before);
  });

  test("a model id that is not a string, or far too long: 400 unknown_model", async () => {
    for (const model of [42, null, "x".repeat(300)])
      await anthropicError(await send("/v1/messages", { ...ok, model }), 400, "unknown_model");
  });
});
