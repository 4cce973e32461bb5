import { describe, expect, test } from "bun:test";
import { t } from "elysia";
import { ERROR_CODES } from "../../src/http/errors.ts";
import { json, logLines, makeTestApp } from "../helpers/context.ts";

type ErrorJson = {
  error: {
    code: string;
    message: string;
    type: string;
    param?: string;
    details?: unknown[];
    request_id?: string;
  };
};

function expectContractError(body: ErrorJson, code: string) {
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.type).toBe(ERROR_CODES[code as keyof typeof ERROR_CODES][1]);
}

describe("error body on every path", async () => {
  const { request, app } = await makeTestApp();
  // Test-only routes on the real app: its global error hook must cover routes added later too.
  app.get("/test/boom", () => {
    throw new Error("secret internals: /etc/passwd sqlite stack");
  });
  app.post("/test/typed", ({ body }) => body, {
    body: t.Object({ n: t.Integer({ minimum: 1 }), s: t.String() }),
  });

  test("unknown route is 404 not_found with the contract body and a request id", async () => {
    const res = await request("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await json<ErrorJson>(res);
    expectContractError(body, "not_found");
    expect(body.error.request_id).toBe(res.headers.get("x-request-id")!);
  });

  test("known path with a wrong method is 405 with Allow", async () => {
    const res = await request("/v1/models", { method: "POST", body: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expectContractError(await json<ErrorJson>(res), "method_not_allowed");
  });

  test("405 also for parameterised paths", async () => {
    const res = await request("/v1/models/sandbox/video", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
  });

  test("malformed JSON is 400 validation_error", async () => {
    const res = await request("/test/typed", {
      method: "POST",
      body: '{"n": 1,',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    const body = await json<ErrorJson>(res);
    expectContractError(body, "validation_error");
    expect(body.error.message).toContain("JSON");
  });

  test("schema failure is 400 validation_error with details naming the fields", async () => {
    const res = await request("/test/typed", {
      method: "POST",
      body: JSON.stringify({ n: 0 }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    const body = await json<ErrorJson>(res);
    expectContractError(body, "validation_error");
    const details = body.error.details as { path: string; message: string }[];
    expect(details.length).toBeGreaterThan(0);
    const paths = details.map((d) => d.path).join(" ");
    expect(paths).toMatch(/body\.(n|s)/);
    expect(body.error.param).toMatch(/^body\./);
  });

  test("unexpected exception is 500 internal_error, logged with a stack, internals not leaked", async () => {
    const before = logLines.length;
    const res = await request("/test/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret internals");
    expect(text).not.toContain("passwd");
    expectContractError(JSON.parse(text) as ErrorJson, "internal_error");
    const logged = logLines.slice(before).map((l) => JSON.parse(l));
    const entry = logged.find((l) => l.msg === "unhandled error");
    expect(entry).toBeDefined();
    expect(entry.stack).toContain("secret internals");
    expect(entry.id).toBe(res.headers.get("x-request-id"));
  });

  test("x-request-id is on success and error responses, unique per request", async () => {
    const responses = await Promise.all([
      request("/v1/models"),
      request("/healthz"),
      request("/nope"),
      request("/v1/account", { key: null }),
    ]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
