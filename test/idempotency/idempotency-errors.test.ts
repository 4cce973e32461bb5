import { describe, expect, test } from "bun:test";
import { errorHeaders } from "../../src/http/errors.ts";
import { claimOf } from "../../src/idempotency/idempotency.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { sqlOf } from "../helpers/sql.ts";
import { post, store } from "./fixture.ts";

describe("the idempotency helper refuses", () => {
  test("a malformed key is 400 validation_error (no header: no claim)", () => {
    expect(claimOf(post("http://h/v1/x"), {})).toBeNull();
    expect(() => claimOf(post("http://h/v1/x", "has space"), {})).toThrow(DomainError);
  });

  test("a failing work stores nothing, so the key stays free (without a claim only the work runs)", async () => {
    const { db, idem } = store();
    expect(
      await idem.once(
        "key_a",
        null,
        () => 7,
        () => ({ status: 200, body: "" }),
      ),
    ).toEqual({ replay: null, value: 7 });
    const claim = { key: "k", fingerprint: "fp" };
    await expect(
      sqlOf(db).tx(
        async (tx) =>
          await idem.in(tx).once(
            "key_a",
            claim,
            () => {
              throw new DomainError("insufficient_balance", "no");
            },
            () => ({ status: 200, body: "" }),
          ),
      ),
    ).rejects.toThrow(DomainError);
    expect(
      await idem.once(
        "key_a",
        claim,
        () => 8,
        () => ({ status: 200, body: "8" }),
      ),
    ).toEqual({
      replay: null,
      value: 8,
    });
  });

  test("another fingerprint under the same key is 409 idempotency_conflict", async () => {
    const { idem } = store();
    await idem.once(
      "key_a",
      { key: "k", fingerprint: "a" },
      () => 1,
      () => ({ status: 200, body: "1" }),
    );
    await expect(
      (async () =>
        await idem.once(
          "key_a",
          { key: "k", fingerprint: "b" },
          () => 2,
          () => ({ status: 200, body: "" }),
        ))(),
    ).rejects.toThrow("different request");
  });
  test("a duplicate while running is 409 with Retry-After; a 2xx settle is replayed afterwards", async () => {
    const { idem } = store();
    const claim = { key: "k", fingerprint: "fp" };
    const first = await idem.claimRunning("key_a", claim);
    expect(first.replay).toBeNull();
    let err: unknown;
    try {
      await idem.claimRunning("key_a", claim);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("idempotency_conflict");
    expect(errorHeaders(err as DomainError)).toEqual({ "retry-after": "1" });
    await first.settle!({ status: 200, body: "done" });
    expect((await idem.claimRunning("key_a", claim)).replay).toEqual({ status: 200, body: "done" });
  });

  test("a failure (null or non-2xx) frees the key for a retry", async () => {
    const { idem } = store();
    const claim = { key: "k", fingerprint: "fp" };
    await (await idem.claimRunning("key_a", claim)).settle!(null);
    const retry = await idem.claimRunning("key_a", claim);
    expect(retry.replay).toBeNull();
    await retry.settle!({ status: 502, body: "failed" });
    expect((await idem.claimRunning("key_a", claim)).replay).toBeNull();
  });
});
