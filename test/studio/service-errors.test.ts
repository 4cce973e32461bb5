import { afterEach, describe, expect, test } from "bun:test";
import { openJob, openJobOnce, studioOpener } from "../../src/jobs/open.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { studioChat, studioEstimate, studioRun, studioRunOf, studioRuns } from "../../src/studio/service.ts";
import { countRows, openJobs } from "../helpers/backend.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { studioSetup } from "./helpers.ts";

let pool: WorkerPool | null = null;
afterEach(async () => {
  await pool?.stop(1000);
  pool = null;
});

async function code(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  return "no error";
}

describe("studio runs obey the API's money rules", () => {
  test("402 insufficient_balance when the estimate does not fit: nothing opened, nothing held", async () => {
    const s = await studioSetup(25_000n); // 2.5 sandbox images
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x", num_images: 3 }))).toBe(
      "insufficient_balance",
    );
    expect(await s.available()).toBe(25_000n);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(0);
    expect(await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x", num_images: 2 })).toMatchObject({
      status: "IN_QUEUE",
    });
    expect(await s.available()).toBe(5_000n);
    expect(await checkInvariants(s.ctx.sql)).toEqual([]);
  });

  test("the model's max and the schema: 400 before anything is reserved", async () => {
    const s = await studioSetup();
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x", num_images: 5 }))).toBe(
      "validation_error",
    );
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/video", { prompt: "x", duration: 11 }))).toBe(
      "validation_error",
    );
    expect(
      await code(
        async () => await studioEstimate(s.ctx, s.ann.accountId, "sandbox/image", { num_images: 5 }),
      ),
    ).toBe("validation_error");
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/nope", {}))).toBe("unknown_model");
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/chat", {}))).toBe("use_chat_completions");
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/image", "a cat"))).toBe("validation_error");
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/image", [1]))).toBe("validation_error");
    expect(await code(async () => await studioEstimate(s.ctx, s.ann.accountId, "sandbox/image", 7))).toBe(
      "validation_error",
    );
    expect(await s.available()).toBe(10_000_000n);
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
  });

  test("a failed run charges nothing: the hold goes back to the balance", async () => {
    const s = await studioSetup();
    const job = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x", sandbox: { fail: true } });
    pool = s.workers();
    const done = await waitForFinal(s.ctx, job.id, 30_000);
    expect(done.status).toBe("FAILED");
    expect(await s.ctx.ledger.getHold(job.hold_id)).toMatchObject({
      status: "released",
      charged_micro: null,
    });
    expect(await s.available()).toBe(10_000_000n);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(0);
    expect(await checkInvariants(s.ctx.sql)).toEqual([]);
  });

  test("a failed studio chat charges nothing", async () => {
    const s = await studioSetup();
    const err = await code(
      studioChat(s.ctx, s.ann, "sandbox/chat", {
        messages: [{ role: "user", content: "x" }],
        sandbox: { fail: true },
      }),
    );
    expect(err).toBe("submit_failed");
    expect(await s.available()).toBe(10_000_000n);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(0);
    expect(
      await code(studioChat(s.ctx, s.ann, "sandbox/image", { messages: [{ role: "user", content: "x" }] })),
    ).toBe("unknown_model");
    expect(await code(studioChat(s.ctx, s.ann, "sandbox/chat", "hi"))).toBe("validation_error");
  });
});

describe("the per-person in-flight cap ([studio] in_flight_per_person, default 2)", () => {
  test("counts one person's open runs and chats, not another person's; a finished run frees a place", async () => {
    const s = await studioSetup();
    expect(s.ctx.live.studio.inFlightPerPerson).toBe(2);
    const a1 = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "1" });
    await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "2" });
    expect(await code(studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "3" }))).toBe("too_many_in_flight");
    // A chat call counts against the same cap.
    expect(
      await code(studioChat(s.ctx, s.ann, "sandbox/chat", { messages: [{ role: "user", content: "x" }] })),
    ).toBe("too_many_in_flight");
    // Another person of the same account, and a person of another account, are not held back.
    await studioRun(s.ctx, s.bob, "sandbox/image", { prompt: "bob" });
    await s.ctx.ledger.topUp(s.eve.accountId, 1_000_000n, null);
    await studioRun(s.ctx, s.eve, "sandbox/image", { prompt: "eve" });
    // Nor is the account's API key: the studio's cap is the person's, the key keeps its own.
    expect(
      (
        await s.request("/v1/queue/sandbox/image", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ prompt: "api" }),
        })
      ).status,
    ).toBe(202);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(2);
    await s.ctx.jobs.cancel(a1.id, Date.now());
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(1);
    expect(await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "3" })).toMatchObject({
      status: "IN_QUEUE",
    });
    // The refused attempts reserved nothing.
    expect(await checkInvariants(s.ctx.sql)).toEqual([]);
    const held = (await s.ctx.accounts.getAccount(s.account.id))!.held_micro;
    expect(held).toBe(4n * 10_000n); // ann 2 + bob 1 + the API's 1
  });

  test("the cap holds under concurrent opens (checked in the open's transaction)", async () => {
    const s = await studioSetup();
    s.ctx.live = { ...s.ctx.live, studio: { inFlightPerPerson: 3 } };
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => studioRun(s.ctx, s.ann, "sandbox/image", { prompt: `p${i}` })),
    );
    expect(results.filter((r) => r.status === "fulfilled").length).toBe(3);
    expect(
      results
        .filter((r): r is PromiseRejectedResult => r.status === "rejected")
        .every((r) => (r.reason as DomainError).code === "too_many_in_flight"),
    ).toBe(true);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(3);
  });

  test("openJob refuses an opener with neither key nor person, and an Idempotency-Key without a key", async () => {
    const s = await studioSetup();
    const model = s.ctx.catalog.get("sandbox/image")!;
    const base = {
      model,
      input: "{}",
      quote: { unit: "image", units: "1", amount_usd_micro: 10_000n } as never,
      webhookUrl: null,
    };
    const nobody = { ...studioOpener(s.ctx, s.ann), personId: null };
    await expect(openJob(s.ctx, { ...base, who: nobody })).rejects.toThrow(RangeError);
    await expect(
      openJobOnce(
        s.ctx,
        { ...base, who: studioOpener(s.ctx, s.ann) },
        { claim: { key: "k", fingerprint: "f" }, answer: () => ({ status: 202, body: "{}" }) },
      ),
    ).rejects.toThrow(RangeError);
  });
});

describe("lookups", () => {
  test("another account's run, an unknown or malformed id: not_found", async () => {
    const s = await studioSetup();
    const job = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x" });
    expect((await studioRunOf(s.ctx, s.ann.accountId, job.id)).id).toBe(job.id);
    expect(await code(async () => await studioRunOf(s.ctx, s.otherAccountId, job.id))).toBe("not_found");
    expect(await code(async () => await studioRunOf(s.ctx, s.ann.accountId, "nope"))).toBe("not_found");
    expect(
      await code(async () => await studioRuns(s.ctx, s.ann.accountId, s.ann.personId, { limit: 0 })),
    ).toBe("validation_error");
    expect(
      await code(async () => await studioRuns(s.ctx, s.ann.accountId, s.ann.personId, { cursor: "x" })),
    ).toBe("validation_error");
  });
});
