import { describe, expect, test } from "bun:test";
import { startingResponse } from "../../src/health/http.ts";
import { json, makeTestApp } from "../helpers/context.ts";

// An instance that cannot serve yet (starting, or its database not ready) answers the contract's
// 503 capacity_unavailable with Retry-After, the one temporary refusal clients already retry, never
// a code outside the contract's table.

type Err = { error: { code: string; type: string; message: string } };
const t = await makeTestApp();

describe("not ready", () => {
  test("a starting instance answers 503 capacity_unavailable with Retry-After", async () => {
    const res = startingResponse();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await json<Err>(res);
    expect(body.error.code).toBe("capacity_unavailable");
    expect(body.error.message).toContain("starting");
  });

  test("/readyz with a schema behind the code: 503 capacity_unavailable with Retry-After", async () => {
    await t.ctx.sql.run(
      "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)",
    );
    const res = await t.request("/readyz", { key: null });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect((await json<Err>(res)).error.code).toBe("capacity_unavailable");
  });
});
