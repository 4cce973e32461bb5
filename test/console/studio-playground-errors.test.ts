/**
 * The studio playground's refusals (issue 34): bad `Edit and run again` ids, chat parameters out of
 * the API's bounds, a refused chat without script that keeps everything typed. Happy paths:
 * studio-playground.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { countRows } from "../helpers/backend.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";
import { studioSetup } from "../studio/helpers.ts";

const mock = startMockOpenAI();
afterAll(() => mock.stop());

const STREAM = { headers: { accept: "text/event-stream" } };

const setup = (balance = 10_000_000n) =>
  studioSetup(balance, {
    providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
    models: [mockTextModel("ok")],
  });
type Setup = Awaited<ReturnType<typeof setup>>;

async function ann(s: Setup) {
  const b = await s.signedIn("ann@example.com");
  await b.page("/console/studio?model=mock/ok");
  return b;
}

const ask = (fields: Record<string, string>) => ({
  model_id: "mock/ok",
  messages: "[]",
  message: "Hello there",
  ...fields,
});

describe("studio playground: Edit and run again, refused", () => {
  test("a malformed or unknown run id is a 404 page", async () => {
    const s = await setup();
    const b = await ann(s);
    for (const id of ["nope", "00000000-0000-4000-8000-000000000000", "../../admin"]) {
      const page = await b.page(`/console/studio?from=${encodeURIComponent(id)}`);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain('id="studio-form"');
    }
  });
});

describe("studio playground: a file refused without the script", () => {
  test("a file that is not an allowed media type: 400, the files store's reason next to its field, nothing opened", async () => {
    const s = await setup();
    const b = await ann(s);
    await b.page("/console/studio?model=sandbox/upscale");
    const res = await b.postMultipart("/console/studio/run", {
      model_id: "sandbox/upscale",
      "upload:image_url": new File(["#!/bin/sh\necho hi\n"], "run.sh", { type: "text/x-shellscript" }),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toMatch(/<input id="f-image_url" name="image_url"[^>]* aria-invalid="true"/);
    expect(text).toContain('<span class="field-error" id="f-image_url-error">');
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
    expect(await countRows(s.ctx.sql, "files")).toBe(0);
  });
});

describe("studio playground: chat parameters out of bounds", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["temperature above 2", { temperature: "3" }, "temperature must be a number from 0 to 2."],
    ["temperature not a number", { temperature: "warm" }, "temperature must be a number from 0 to 2."],
    ["max_tokens of 0", { max_tokens: "0" }, "max_tokens must be a whole number from 1 to 8192."],
    [
      "max_tokens past the context",
      { max_tokens: "9000" },
      "max_tokens must be a whole number from 1 to 8192.",
    ],
    ["max_tokens not whole", { max_tokens: "1.5" }, "max_tokens must be a whole number from 1 to 8192."],
    [
      "a system prompt past 32 Ki",
      { system: "x".repeat(32 * 1024 + 1) },
      "The system prompt is longer than 32768 characters.",
    ],
  ];
  for (const [name, fields, message] of cases) {
    test(`${name}: the API's 400 for the script, nothing reaches the upstream or is opened`, async () => {
      const s = await setup();
      const b = await ann(s);
      const before = mock.requests.length;
      const res = await b.post("/console/studio/chat", ask(fields), STREAM);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string; param: string } };
      expect(body.error.code).toBe("validation_error");
      expect(body.error.message).toBe(message);
      expect(mock.requests.length).toBe(before);
      expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
      // The Estimate says why instead of a price.
      const est = await (await b.post("/console/studio/chat/estimate", ask(fields))).text();
      expect(est).toContain(message);
      expect(est).toMatch(/<output id="studio-estimate"[^>]*><span class="hint">none<\/span><\/output>/);
    });
  }

  test("without script, a refused message comes back on the studio with everything typed and the reason", async () => {
    const s = await setup();
    const b = await ann(s);
    const res = await b.post(
      "/console/studio/chat",
      ask({ system: "Be brief.", temperature: "3", max_tokens: "100", message: "Keep me" }),
    );
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain(
      '<p class="notice error" role="alert" id="studio-refusal">Not sent, nothing was charged: temperature must be a number from 0 to 2.',
    );
    expect(text).toMatch(/<textarea id="studio-chat-system" name="system"[^>]*>Be brief\.<\/textarea>/);
    expect(text).toMatch(
      /<input id="studio-chat-temperature" name="temperature"[^>]* value="3" aria-invalid="true"/,
    );
    expect(text).toMatch(/<input id="studio-chat-max_tokens" name="max_tokens"[^>]* value="100"/);
    expect(text).toMatch(/<textarea id="studio-chat-message" name="message"[^>]*>Keep me<\/textarea>/);
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
  });

  test("without script, an empty balance keeps the message and links billing (402)", async () => {
    const s = await setup(0n);
    const b = await ann(s);
    const res = await b.post("/console/studio/chat", ask({ system: "Be brief.", message: "Still here" }));
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).toContain('<a href="/console/billing">Add money on the billing page</a>');
    expect(text).toMatch(/<textarea id="studio-chat-message" name="message"[^>]*>Still here<\/textarea>/);
    expect(text).toMatch(/<textarea id="studio-chat-system" name="system"[^>]*>Be brief\.<\/textarea>/);
  });
});
