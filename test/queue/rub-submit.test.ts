import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

// A RUB account's 202 carries the price it was held in roubles (price_rub_micro), from the hold the
// reservation wrote: without and with an Idempotency-Key (whose stored answer is rendered inside the
// job's transaction), and the same on a replay. A USD account's 202 has none.

async function rubAccount() {
  const t = await makeTestApp();
  await t.ctx.fx.set("RUB", 92_500_000n, "test");
  const rub = await t.ctx.accounts.createAccount("rub", "RUB");
  const accountId = (await t.ctx.accounts.findKey(rub.keyId))!.account_id;
  await t.ctx.ledger.topUp(accountId, 1_000_000_000n, null);
  const submit = (headers: Record<string, string> = {}) =>
    t.request("/v1/queue/sandbox/image", {
      method: "POST",
      key: rub.key,
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ prompt: "x", num_images: 3, sandbox: { delay_ms: 60_000 } }),
    });
  return { t, submit };
}

describe("the 202 of a RUB account's submit", () => {
  test("names the held price in roubles, equal to the hold", async () => {
    const { t, submit } = await rubAccount();
    const res = await submit();
    expect(res.status).toBe(202);
    const body = await json<{ request_id: string; price_rub_micro?: string; quoted_usd_micro: string }>(res);
    expect(body.quoted_usd_micro).toBe("30000");
    expect(body.price_rub_micro).toBe("2775000");
    const hold = await t.ctx.sql.get<{ amount_micro: bigint; currency: string }>(
      "SELECT amount_micro, currency FROM holds WHERE request_id = ?",
      [body.request_id],
    );
    expect(hold).toEqual({ amount_micro: 2_775_000n, currency: "RUB" });
  });

  test("the same under an Idempotency-Key, and on its replay", async () => {
    const { submit } = await rubAccount();
    const first = await submit({ "idempotency-key": "rub-1" });
    expect(first.status).toBe(202);
    expect((await json(first)).price_rub_micro).toBe("2775000");
    const again = await submit({ "idempotency-key": "rub-1" });
    expect(again.status).toBe(200);
    expect((await json(again)).price_rub_micro).toBe("2775000");
  });

  test("a USD account's has no rouble price", async () => {
    const t = await makeTestApp();
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
    const res = await t.request("/v1/queue/sandbox/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x", sandbox: { delay_ms: 60_000 } }),
    });
    expect(res.status).toBe(202);
    expect(await json(res)).not.toHaveProperty("price_rub_micro");
  });
});
