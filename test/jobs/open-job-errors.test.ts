import { describe, expect, test } from "bun:test";
import { EVERY_MODEL } from "../../src/catalog/access.ts";
import { errorHeaders } from "../../src/http/errors.ts";
import { resolveMediaModel, resolveTextModel } from "../../src/jobs/models.ts";
import { openJob, openJobOnce } from "../../src/jobs/open.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { countRows } from "../helpers/backend.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { idAnswer, openJobSetup } from "./open-job-fixture.ts";

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  throw new Error("expected an DomainError");
}

describe("openJob refuses, and then writes nothing", () => {
  test("at the in-flight cap: 429 too_many_in_flight with Retry-After, nothing reserved", async () => {
    const s = await openJobSetup();
    const who = { ...s.who, maxInFlight: 1 };
    await openJob(s.t.ctx, s.media({ who }));
    const err = await openJob(s.t.ctx, s.text({ who })).catch((e: DomainError) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("too_many_in_flight");
    expect((err as DomainError).message).toContain("1 open calls");
    expect(errorHeaders(err as DomainError)).toEqual({ "retry-after": "1" });
    expect(await s.jobs()).toBe(1);
    expect(await s.holds()).toBe(1);
    expect(await checkInvariants(s.t.ctx.sql)).toEqual([]);
  });

  test("without the balance: 402 insufficient_balance, no job, no hold, no idempotency record", async () => {
    const s = await openJobSetup(0n);
    const claim = { key: "poor", fingerprint: "fp" };
    expect(await codeOf(openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer }))).toBe(
      "insufficient_balance",
    );
    expect(await s.jobs()).toBe(0);
    expect(await s.holds()).toBe(0);
    expect(await countRows(s.t.ctx.sql, "idempotency")).toBe(0);
  });

  test("the same Idempotency-Key with another fingerprint is 409 idempotency_conflict", async () => {
    const s = await openJobSetup();
    await openJobOnce(s.t.ctx, s.media(), { claim: { key: "k", fingerprint: "a" }, answer: idAnswer });
    expect(
      await codeOf(
        openJobOnce(s.t.ctx, s.media(), { claim: { key: "k", fingerprint: "b" }, answer: idAnswer }),
      ),
    ).toBe("idempotency_conflict");
    expect(await s.jobs()).toBe(1);
  });

  test("a keyless (studio) opener is refused until the studio brings its in-flight count", async () => {
    const s = await openJobSetup();
    const who = { ...s.who, keyId: null, source: "STUDIO" as const };
    await expect(openJob(s.t.ctx, s.media({ who }))).rejects.toBeInstanceOf(RangeError);
    expect(await s.jobs()).toBe(0);
  });
});

describe("resolveModel: the route's checks", async () => {
  const s = await openJobSetup();
  test("the queue takes media models", async () => {
    expect(resolveMediaModel(s.t.ctx, "sandbox/image", EVERY_MODEL).id).toBe("sandbox/image");
    expect(await codeOf(() => resolveMediaModel(s.t.ctx, "nope/nope", EVERY_MODEL))).toBe("unknown_model");
    expect(await codeOf(() => resolveMediaModel(s.t.ctx, "sandbox/chat", EVERY_MODEL))).toBe(
      "use_chat_completions",
    );
  });
  test("chat takes text models only", async () => {
    expect(resolveTextModel(s.t.ctx, "sandbox/chat", EVERY_MODEL).id).toBe("sandbox/chat");
    expect(await codeOf(() => resolveTextModel(s.t.ctx, "sandbox/image", EVERY_MODEL))).toBe("unknown_model");
    expect(await codeOf(() => resolveTextModel(s.t.ctx, "nope/nope", EVERY_MODEL))).toBe("unknown_model");
  });
});
