import { describe, expect, test } from "bun:test";
import { finishChat, startChat } from "../../src/chat/service.ts";
import { parseChatBody } from "../../src/chat/validate.ts";
import { apiOpener } from "../../src/jobs/open.ts";
import { logLines } from "../helpers/logs.ts";
import { testQueueServices } from "../helpers/services.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";

async function setup() {
  const t = await testQueueServices();
  await t.ctx.ledger.topUp(t.account.id, 10_000_000n, null);
  const principal = (await t.ctx.accounts.authenticate(t.key))!;
  const model = t.ctx.catalog.get("sandbox/chat")!;
  const req = parseChatBody({ model: "sandbox/chat", messages: [{ role: "user", content: "Hi" }] });
  return { t, principal, model, req };
}

const outcome = { content: "Hello", finishReason: "stop", usage: { prompt_tokens: 8, completion_tokens: 1 } };

describe("chat service", () => {
  test("a reservation is a running job with its hold; the settlement charges the usage", async () => {
    const { t, principal, model, req } = await setup();
    const started = await startChat(t.ctx, apiOpener(t.ctx, principal), model, req);
    expect(started.job).toMatchObject({ status: "IN_PROGRESS", attempt: 1n, lease_owner: "request" });
    expect(await t.ctx.jobs.get(started.job.id)).toEqual(started.job); // the returned row is the stored one
    const hold = (await t.ctx.ledger.getHold(started.job.hold_id))!;
    expect(hold.amount_micro).toBe(started.quote.amount_usd_micro);

    await finishChat(t.ctx, started, outcome);
    expect((await t.ctx.jobs.get(started.job.id))!.status).toBe("COMPLETED");
    const settled = (await t.ctx.ledger.getHold(started.job.hold_id))!;
    expect(settled.status).toBe("settled");
    expect(settled.charged_micro).toBeLessThanOrEqual(hold.amount_micro);
    expect(settled.charged_micro).toBeGreaterThan(0n);
    expect(await checkInvariants(t.ctx.sql)).toEqual([]);
  });

  test("a reply that ends after the deadline sweep closed its job is not charged, and is logged", async () => {
    const { t, principal, model, req } = await setup();
    const started = await startChat(t.ctx, apiOpener(t.ctx, principal), model, req);
    await t.ctx.jobs.fail(started.job.id, "generation_failed", "time limit", Date.now()); // the sweep
    const before = logLines.length;
    await finishChat(t.ctx, started, outcome);
    expect((await t.ctx.jobs.get(started.job.id))!.status).toBe("FAILED");
    expect((await t.ctx.ledger.getHold(started.job.hold_id))!.status).toBe("released");
    const warned = logLines.slice(before).map((l) => JSON.parse(l));
    expect(warned).toContainEqual(expect.objectContaining({ level: "warn", request_id: started.job.id }));
    expect(await checkInvariants(t.ctx.sql)).toEqual([]);
  });
});
