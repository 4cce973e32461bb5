import { describe, expect, test } from "bun:test";
import {
  claimOf,
  REPLAYED_HEADER,
  replayResponse,
  requestFingerprint,
} from "../../src/idempotency/idempotency.ts";
import { sqlOf } from "../helpers/sql.ts";
import { post, store } from "./fixture.ts";

describe("claimOf: the contract's one fingerprint rule", () => {
  test("method, path, query and the canonical body all count; the body's key order does not", () => {
    const fp = (url: string, body: unknown, method = "POST") =>
      requestFingerprint(new Request(url, { method }), body);
    const base = fp("http://h/v1/chat/completions", { a: 1, b: [1, { c: 2, d: 3 }] });
    expect(fp("http://h/v1/chat/completions", { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(base);
    expect(fp("http://other:9/v1/chat/completions", { a: 1, b: [1, { c: 2, d: 3 }] })).toBe(base);
    expect(fp("http://h/v1/chat/completions?x=1", { a: 1, b: [1, { c: 2, d: 3 }] })).not.toBe(base);
    expect(fp("http://h/v1/chat/other", { a: 1, b: [1, { c: 2, d: 3 }] })).not.toBe(base);
    expect(fp("http://h/v1/chat/completions", { a: 2, b: [1, { c: 2, d: 3 }] })).not.toBe(base);
    expect(fp("http://h/v1/chat/completions", { a: 1, b: [1, { c: 2, d: 3 }] }, "PUT")).not.toBe(base);
    expect(claimOf(post("http://h/v1/chat/completions", "k"), { a: 1, b: [1, { c: 2, d: 3 }] })).toEqual({
      key: "k",
      fingerprint: base,
    });
  });

  test("a replay carries its stored status and body, or the route's, and Idempotent-Replayed", async () => {
    const r = replayResponse({ status: 202, body: '{"a":1}' }, 200);
    expect(r.status).toBe(200);
    expect(r.headers.get(REPLAYED_HEADER)).toBe("true");
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.text()).toBe('{"a":1}');
    expect(replayResponse({ status: 201, body: "x" }).status).toBe(201);
  });
});

describe("once: short operations inside the work's transaction", () => {
  test("runs the work and stores its answer; the same claim replays it without running", async () => {
    const { db, idem } = store();
    let runs = 0;
    const work = () => ++runs;
    const answer = (n: number) => ({ status: 201, body: `{"n":${n}}` });
    const claim = { key: "k", fingerprint: "fp" };
    expect(await sqlOf(db).tx(async (tx) => await idem.in(tx).once("key_a", claim, work, answer))).toEqual({
      replay: null,
      value: 1,
    });
    expect(await sqlOf(db).tx(async (tx) => await idem.in(tx).once("key_a", claim, work, answer))).toEqual({
      replay: { status: 201, body: '{"n":1}' },
    });
    expect(runs).toBe(1);
    // Scoped to the API key: another key's same Idempotency-Key is its own.
    expect(await idem.once("key_b", claim, work, answer)).toEqual({ replay: null, value: 2 });
  });
});

describe("claimRunning: long operations claim the key around the work", () => {
  test("without a claim nothing is written and settle does nothing", async () => {
    const { db, idem } = store();
    const r = await idem.claimRunning("key_a", null);
    expect(r.replay).toBeNull();
    await r.settle!({ status: 200, body: "x" });
    expect(db.query("SELECT count(*) AS n FROM idempotency").get()).toEqual({ n: 0n });
  });
});
