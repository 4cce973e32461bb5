import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ApiError } from "@fal-ai/client";
import { startFunded } from "../helpers/api.ts";
import { falClientFor } from "../helpers/fal.ts";

/** fal.stream and keys: who may open a stream, and whose job a stream shows. */
let s: Awaited<ReturnType<typeof startFunded>>;
let otherKey = "";
beforeAll(async () => {
  s = await startFunded();
  const res = await fetch(`${s.url}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "other", credit: "5" }),
  });
  otherKey = ((await res.json()) as { key: string }).key;
});
afterAll(() => s.cleanup());

const stream = (key: string | null, headers: Record<string, string> = {}) =>
  s.fetch("/v1/run/sandbox/speech/stream", {
    method: "POST",
    key,
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify({ text: "mine", duration: 1 }),
  });

describe("fal.stream and keys", () => {
  test("no key: 401 in fal's shape, raised by the client, caught", async () => {
    const res = await stream(null);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { detail: string; error: { code: string } };
    expect(body.error.code).toBe("unauthorized");
    expect(body.detail.length).toBeGreaterThan(0);

    let caught: unknown;
    try {
      const st = await falClientFor(s.url, "gk_not_a_key").stream("sandbox/speech", { input: { text: "x" } });
      await st.done();
    } catch (e) {
      caught = e;
    }
    expect((caught as ApiError<unknown>).status).toBe(401);
  });

  test("two different keys in one request: 401, nothing opened", async () => {
    const before = await (await s.get("/v1/requests?limit=50")).json();
    const res = await stream(s.defaultKey, { "x-api-key": otherKey });
    expect(res.status).toBe(401);
    expect(await (await s.get("/v1/requests?limit=50")).json()).toEqual(before);
  });

  test("an Idempotency-Key is the key's own: another account reusing it opens its own job", async () => {
    const mine = await stream(s.defaultKey, { "idempotency-key": "shared-key" });
    await mine.text();
    const theirs = await stream(otherKey, { "idempotency-key": "shared-key" });
    const events = await theirs.text();
    const myId = mine.headers.get("x-fal-request-id")!;
    const theirId = theirs.headers.get("x-fal-request-id")!;
    expect(theirId).not.toBe(myId);
    expect(events).not.toContain(myId);
    // and the other account cannot read the first one's job
    expect((await s.get(`/v1/requests/${myId}/status`, { key: otherKey })).status).toBe(404);
    expect((await s.get(`/v1/requests/${theirId}/status`, { key: otherKey })).status).toBe(200);
  });
});
