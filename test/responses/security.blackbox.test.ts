import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { AuthenticationError } from "openai";
import type { startFunded } from "../helpers/api.ts";
import { startMockOpenAI } from "../helpers/mock-openai.ts";
import { startWithMock } from "./helpers.ts";

/**
 * POST /v1/responses and who may do what: a key is required (two different keys are refused), a
 * response belongs to its account (another account's Idempotency-Key or request id reaches none of
 * it), and what an upstream says never reaches the client (the mock's "echo-<status>" marker and
 * its mid-stream message stay in the operator's log).
 */
const mock = startMockOpenAI();
mock.echo = "UPSTREAM-SAID-THIS";
let s: Awaited<ReturnType<typeof startFunded>>;
let client: OpenAI;
let otherKey: string;
beforeAll(async () => {
  s = await startWithMock(mock, ["echo-400", "midstream-error"]);
  client = new OpenAI({ apiKey: s.defaultKey!, baseURL: `${s.url}/v1`, maxRetries: 0 });
  const other = await fetch(`${s.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `other-${Date.now()}`, credit: "5" }),
  });
  otherKey = ((await other.json()) as { key: string }).key;
});
afterAll(() => {
  s?.cleanup();
  mock.stop();
});

const body = { model: "sandbox/chat", input: "secret question" };

describe("keys", () => {
  test("no key: 401, the SDK's AuthenticationError; a wrong key too", async () => {
    const res = await s.post("/v1/responses", body, { key: null });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const wrong = new OpenAI({ apiKey: "gk_wrong", baseURL: `${s.url}/v1`, maxRetries: 0 });
    const thrown = await wrong.responses.create(body).then(
      () => null,
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(AuthenticationError);
  });

  test("two different keys (Authorization and x-api-key) are 401", async () => {
    const res = await s.post("/v1/responses", body, { headers: { "x-api-key": otherKey } });
    expect(res.status).toBe(401);
  });
});

describe("a response belongs to its account", () => {
  test("another account's request id is 404", async () => {
    const r = await client.responses.create(body);
    const res = await s.get(`/v1/requests/${r.id.slice("resp_".length)}`, { key: otherKey });
    expect(res.status).toBe(404);
  });

  test("the same Idempotency-Key from another account replays nothing of the first", async () => {
    const idem = `idem-${Date.now()}`;
    const mine = await client.responses.create(body, { headers: { "Idempotency-Key": idem } });
    const theirs = await new OpenAI({
      apiKey: otherKey,
      baseURL: `${s.url}/v1`,
      maxRetries: 0,
    }).responses.create(
      { model: "sandbox/chat", input: "their question" },
      { headers: { "Idempotency-Key": idem } },
    );
    expect(theirs.id).not.toBe(mine.id);
    expect(theirs.output_text).toContain("their question");
    expect(theirs.output_text).not.toContain("secret question");
  });
});

describe("an upstream's words stay out of the answer", () => {
  test("an upstream refusal is 502 submit_failed with a fixed message", async () => {
    const res = await s.post("/v1/responses", { model: "mock/echo-400", input: "hi" });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain("submit_failed");
    expect(text).not.toContain(mock.echo);
    expect(text).not.toContain("sk-upstream-secret");
  });

  test("a mid-stream upstream error: the stream carries our message, not the upstream's", async () => {
    const res = await s.post("/v1/responses", { model: "mock/midstream-error", input: "hi", stream: true });
    const text = await res.text();
    expect(text).toContain("event: response.failed");
    expect(text).toContain("event: error");
    expect(text).not.toContain("the model crashed");
  });
});
