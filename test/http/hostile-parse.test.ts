import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ValidationError } from "elysia";
import { checkJsonDepth, JSON_MAX_DEPTH, parseClientJson } from "../../src/http/body-limit.ts";
import { idCursor, paging, sequenceCursor } from "../../src/http/inputs.ts";
import { validationToDomainError } from "../../src/http/validation.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { json, makeTestApp } from "../helpers/context.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

function apiError(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected an DomainError");
}

describe("the nesting scan before JSON.parse", () => {
  test("accepts exactly the limit and refuses one more, naming the limit", () => {
    expect(() => checkJsonDepth(bytes(nested(JSON_MAX_DEPTH)))).not.toThrow();
    const e = apiError(() => checkJsonDepth(bytes(nested(JSON_MAX_DEPTH + 1))));
    expect(e.code).toBe("validation_error");
    expect(e.message).toContain(String(JSON_MAX_DEPTH));
  });

  test("objects and arrays count alike; siblings do not add up", () => {
    const objects = (n: number) => bytes(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`);
    expect(() => checkJsonDepth(objects(64))).not.toThrow();
    expect(() => checkJsonDepth(objects(65))).toThrow(DomainError);
    expect(() => checkJsonDepth(bytes(`[${new Array(10_000).fill(nested(60)).join(",")}]`))).not.toThrow();
  });

  test("brackets inside strings, after escaped quotes and backslashes, are not counted", () => {
    const tricky = JSON.stringify({ a: `\\"${"[".repeat(500)}`, b: "\\", c: `"{{{{` });
    expect(() => checkJsonDepth(bytes(tricky))).not.toThrow();
    // A closing quote after an escaped backslash ends the string: the brackets after it count.
    expect(() => checkJsonDepth(bytes(`["\\\\", ${nested(70)}]`))).toThrow(DomainError);
  });

  test("multi-byte UTF-8 is scanned exactly", () => {
    expect(parseClientJson(bytes('{"p": "日本語 🎉 [[[", "q": [["é"]]}'))).toEqual({
      p: "日本語 🎉 [[[",
      q: [["é"]],
    });
  });
});

describe("keys refused in client JSON", () => {
  for (const body of [
    '{"model_id": {"toString": 1}}',
    '{"a": [{"b": {"valueOf": "x"}}]}',
    '{"__proto__": {"admin": true}}',
    '{"input": {"\\u0074oString": null}}',
  ]) {
    test(body, () => {
      const e = apiError(() => parseClientJson(bytes(body)));
      expect(e.code).toBe("validation_error");
      expect(e.param).toMatch(/^body\./);
    });
  }

  test("the error names where the key is", () => {
    const e = apiError(() => parseClientJson(bytes('{"a": [{"b": {"toString": 1}}]}')));
    expect(e.param).toBe("body.a.0.b.toString");
  });

  test("the same words as values or inside other keys are fine", () => {
    expect(
      parseClientJson(bytes('{"prompt": "toString __proto__", "toStrings": 1, "constructor": 2}')),
    ).toEqual({
      prompt: "toString __proto__",
      toStrings: 1,
      constructor: 2,
    });
  });

  test("malformed JSON is still 400 'not valid JSON'", () => {
    expect(apiError(() => parseClientJson(bytes('{"a": [1,'))).message).toContain("not valid JSON");
  });
});

describe("paging()", () => {
  test("defaults to 20 and no cursor", () => {
    expect(paging({}, sequenceCursor)).toEqual({ limit: 20, cursor: null });
    expect(paging({ cursor: "" }, sequenceCursor)).toEqual({ limit: 20, cursor: null });
  });

  test("accepts 1..100 and a ledger cursor up to 2^63-1", () => {
    expect(paging({ limit: "1", cursor: "9223372036854775807" }, sequenceCursor)).toEqual({
      limit: 1,
      cursor: 9223372036854775807n,
    });
    expect(paging({ limit: "100" }, sequenceCursor).limit).toBe(100);
    expect(paging({ limit: "007" }, sequenceCursor).limit).toBe(7);
  });

  for (const limit of [
    "-1",
    "0",
    "1.5",
    "1e30",
    "9223372036854775808",
    "101",
    "1000",
    "",
    "abc",
    " 5",
    "0x10",
  ]) {
    test(`limit ${JSON.stringify(limit)} is refused with param limit`, () => {
      const e = apiError(() => paging({ limit }, sequenceCursor));
      expect([e.code, e.param]).toEqual(["validation_error", "limit"]);
    });
  }

  for (const cursor of ["9223372036854775808", "0", "-1", "1.5", "abc", "1".repeat(300)]) {
    test(`ledger cursor ${cursor.slice(0, 24)} is refused with param cursor`, () => {
      const e = apiError(() => paging({ cursor }, sequenceCursor));
      expect([e.code, e.param]).toEqual(["validation_error", "cursor"]);
    });
  }

  test("id cursors must have the listed ids' shape", () => {
    const acct = idCursor(/^acct_[0-9A-Za-z]{8,64}$/);
    expect(paging({ cursor: "acct_12345678" }, acct).cursor).toBe("acct_12345678");
    expect(apiError(() => paging({ cursor: "acct_1' OR 1=1" }, acct)).param).toBe("cursor");
  });
});

describe("validation errors never format the offending value", () => {
  function validationError(value: unknown): ValidationError {
    // Built without Elysia's constructor: in a test runner (NODE_ENV=test) that constructor itself
    // interpolates the value; the server runs Elysia in production mode, where it does not.
    const validator = TypeCompiler.Compile(Type.Object({ model_id: Type.String() }));
    return Object.assign(Object.create(ValidationError.prototype) as ValidationError, {
      type: "body",
      validator,
      value,
    });
  }

  test("a value with a non-function toString gives a 400 naming the field", () => {
    const e = validationToDomainError(validationError({ model_id: { toString: 1 } }));
    expect([e.code, e.param, e.message]).toEqual([
      "validation_error",
      "body.model_id",
      "Invalid body.model_id: Expected string",
    ]);
  });

  test("deep arrays do not overflow the stack", () => {
    const e = validationToDomainError(validationError({ model_id: JSON.parse(nested(5000)) }));
    expect(e.param).toBe("body.model_id");
  });

  test("query failures name the bare parameter", () => {
    const validator = TypeCompiler.Compile(Type.Object({ status: Type.Literal("IN_QUEUE") }));
    const err = Object.assign(Object.create(ValidationError.prototype) as ValidationError, {
      type: "query",
      validator,
      value: { status: "nope" },
    });
    expect(validationToDomainError(err).param).toBe("status");
  });
});

describe("the error handler itself cannot fail", () => {
  test("an error that breaks while being logged still gets the contract's JSON 500", async () => {
    const { request, app } = await makeTestApp();
    app.get("/test/evil-error", () => {
      const err = new Error("boom");
      Object.defineProperty(err, "stack", {
        get() {
          throw new Error("stack getter throws");
        },
      });
      throw err;
    });
    const res = await request("/test/evil-error");
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await json<{ error: { code: string; type: string; request_id: string } }>(res);
    expect(body.error.code).toBe("internal_error");
    expect(body.error.type).toBe("server_error");
    expect(body.error.request_id).toBe(res.headers.get("x-request-id")!);
  });
});
