import { afterEach, describe, expect, test } from "bun:test";
import { walletPage } from "../../src/ledger/figures.ts";
import { listRequests } from "../../src/queue/requests.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { studioChat, studioEstimate, studioRun, studioRuns } from "../../src/studio/service.ts";
import { openJobs } from "../helpers/backend.ts";
import { json } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { studioSetup } from "./helpers.ts";

let pool: WorkerPool | null = null;
afterEach(async () => {
  await pool?.stop(1000);
  pool = null;
});

describe("studio runs: the API's one path, source STUDIO, no key", () => {
  test("a run reserves exactly the estimate, is keyless with its person, and charges the estimate", async () => {
    const s = await studioSetup();
    const input = { prompt: "a cat", num_images: 3 };
    const est = await studioEstimate(s.ctx, s.ann.accountId, "sandbox/image", input);
    // The same numbers as POST /v1/estimate for this account.
    const api = await json(
      await s.request("/v1/estimate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image", input }),
      }),
    );
    expect(est).toEqual(api as never);
    const before = await s.available();
    const job = await studioRun(s.ctx, s.ann, "sandbox/image", input);
    expect(job).toMatchObject({
      status: "IN_QUEUE",
      source: "STUDIO",
      key_id: null,
      person_id: s.ann.personId,
    });
    const hold = (await s.ctx.ledger.getHold(job.hold_id))!;
    expect(hold).toMatchObject({ source: "STUDIO", key_id: null, status: "open" });
    expect(hold.amount_micro).toBe(BigInt(est.price_usd_micro));
    expect(await s.available()).toBe(before - BigInt(est.price_usd_micro));
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(1);

    pool = s.workers();
    const done = await waitForFinal(s.ctx, job.id, 30_000);
    expect(done.status).toBe("COMPLETED");
    expect((await s.ctx.ledger.getHold(job.hold_id))!.charged_micro).toBe(BigInt(est.price_usd_micro));
    expect(await s.available()).toBe(before - BigInt(est.price_usd_micro));
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(0);
    expect(await checkInvariants(s.ctx.sql)).toEqual([]);

    // Source STUDIO in the wallet and in the requests list.
    const wallet = await walletPage(s.ctx, s.account.id, { source: "STUDIO" });
    expect(wallet.entries.map((e) => [e.kind, e.source, e.request_id, e.key_id])).toEqual([
      ["charge", "STUDIO", job.id, null],
      ["hold", "STUDIO", job.id, null],
    ]);
    const listed = await listRequests(s.ctx, s.account.id, { source: "STUDIO" });
    expect(listed.items.map((r) => [r.id, r.source, r.key_id, r.price.charged_micro])).toEqual([
      [job.id, "STUDIO", null, BigInt(est.price_usd_micro)],
    ]);
    // And in the API's records of the account.
    const apiList = await json<{ data: { request_id: string; source: string }[] }>(
      await s.request("/v1/requests"),
    );
    expect(apiList.data.map((r) => [r.request_id, r.source])).toEqual([[job.id, "STUDIO"]]);
  });

  test("a RUB account's studio estimate is in RUB and equals the API's", async () => {
    const s = await studioSetup();
    await s.ctx.fx.set("RUB", 92_500_000n, "test");
    const rub = await s.ctx.accounts.createAccount("rub", "RUB");
    const input = { prompt: "x", num_images: 2 };
    const est = await studioEstimate(s.ctx, rub.account.id, "sandbox/image", input);
    const api = await json(
      await s.request("/v1/estimate", {
        method: "POST",
        key: rub.key,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image", input }),
      }),
    );
    expect(est.currency).toBe("RUB");
    expect(est).toEqual(api as never);
  });

  test("the person's runs, newest first, with their outputs; not another person's, not another account's", async () => {
    const s = await studioSetup();
    pool = s.workers();
    const a1 = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "one" });
    await waitForFinal(s.ctx, a1.id, 30_000);
    const a2 = await studioRun(s.ctx, s.ann, "sandbox/speech", { text: "hello", duration: 1 });
    await waitForFinal(s.ctx, a2.id, 30_000);
    const b1 = await studioRun(s.ctx, s.bob, "sandbox/image", { prompt: "bob's" });
    await waitForFinal(s.ctx, b1.id, 30_000);
    const page = await studioRuns(s.ctx, s.ann.accountId, s.ann.personId, { limit: 1 });
    expect(page.items.map((r) => r.request_id)).toEqual([a2.id]);
    expect(page.items[0]!.outputs.map((o) => o.content_type)).toEqual(["audio/wav"]);
    expect(page.items[0]!.outputs[0]!.url).toContain(`/requests/${a2.id}/output/0`);
    const next = await studioRuns(s.ctx, s.ann.accountId, s.ann.personId, {
      limit: 1,
      cursor: page.next_cursor,
    });
    expect(next.items.map((r) => r.request_id)).toEqual([a1.id]);
    expect(next.items[0]!.outputs[0]!.content_type).toBe("image/png");
    expect(next.next_cursor).toBeNull();
    expect((await studioRuns(s.ctx, s.bob.accountId, s.bob.personId)).items.map((r) => r.request_id)).toEqual(
      [b1.id],
    );
    // Ann's runs looked up in another account: none.
    expect((await studioRuns(s.ctx, s.otherAccountId, s.ann.personId)).items).toEqual([]);
  });

  test("a studio chat is opened keyless with source STUDIO and charged like the API's", async () => {
    const s = await studioSetup();
    const before = await s.available();
    const answer = await studioChat(s.ctx, s.ann, "sandbox/chat", {
      messages: [{ role: "user", content: "Say something." }],
      max_tokens: 32,
    });
    expect(answer.kind).toBe("json");
    const body = JSON.parse((answer as { body: string }).body) as { id: string; usage: object };
    const id = body.id.replace("chatcmpl-", "");
    const job = (await s.ctx.jobs.get(id))!;
    expect(job).toMatchObject({
      status: "COMPLETED",
      source: "STUDIO",
      key_id: null,
      person_id: s.ann.personId,
    });
    const hold = (await s.ctx.ledger.getHold(job.hold_id))!;
    expect(hold.status).toBe("settled");
    expect(hold.charged_micro! > 0n).toBe(true);
    expect(await s.available()).toBe(before - hold.charged_micro!);
    expect(await openJobs(s.ctx.sql, { personId: s.ann.personId })).toBe(0);
    const charges = (await walletPage(s.ctx, s.account.id, { source: "STUDIO" })).entries.filter(
      (e) => e.kind === "charge",
    );
    expect(charges.map((e) => [e.request_id, e.amount_micro])).toEqual([[id, hold.charged_micro!]]);

    // Streamed: the API's SSE body, settled before [DONE].
    const streamed = await studioChat(s.ctx, s.ann, "sandbox/chat", {
      messages: [{ role: "user", content: "Stream it." }],
      max_tokens: 16,
      stream: true,
    });
    expect(streamed.kind).toBe("stream");
    const text = await new Response((streamed as { body: ReadableStream }).body).text();
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(await checkInvariants(s.ctx.sql)).toEqual([]);
  });
});
