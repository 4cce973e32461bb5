import { afterAll, describe, expect, test } from "bun:test";
import { verifyWebhook } from "../../src/webhooks/signing.ts";
import { reserveUsd } from "../ledger/ledger-helpers.ts";
import { receiver } from "../webhooks/helpers.ts";
import { alertRows, alertsApp, armed, mailRows, testDispatcher, USD } from "./helpers.ts";

const hooks = receiver();
afterAll(() => hooks.stop());

describe("low-balance alert: the rule", () => {
  test("fires once on a fall below, not again on further falls", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/once"));
    await t.reserve(4); // available 6: above
    expect(await alertRows(t.ctx.sql)).toHaveLength(0);
    await t.reserve(2); // available 4: below -> alert
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    await t.reserve(1); // available 3: further fall, no second alert
    await t.reserve(3); // available 0
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
  });

  test("a reservation and its release (a failed job) do not alert twice: no flapping", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/flap"));
    const first = await t.reserve(6); // available 4 -> alert
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    await t.ctx.ledger.release(first.id); // available 10, above; a release does not re-arm
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    for (let i = 0; i < 5; i++) await t.ctx.ledger.release((await t.reserve(6)).id);
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    // A settlement (charge) cannot re-arm either.
    await t.ctx.ledger.settle((await t.reserve(6)).id, USD(1));
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
  });

  test("a top-up above re-arms; the next fall alerts again", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/again"));
    await t.ctx.ledger.settle((await t.reserve(7)).id, USD(7)); // balance 3 -> alert 1
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    await t.ctx.ledger.topUp(t.accountId, USD(1), "small credit"); // available 4: still below, stays disarmed
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    await t.ctx.ledger.topUp(t.accountId, USD(1), "credit to the threshold"); // available 5 = threshold: re-armed
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    await t.reserve(0.5); // 4.5: below -> alert 2
    expect(await alertRows(t.ctx.sql)).toHaveLength(2);
    // A positive adjustment re-arms too; a negative one can make the fall.
    await t.ctx.ledger.adjust(t.accountId, USD(10), "goodwill");
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    await t.ctx.ledger.adjust(t.accountId, -USD(10), "correction"); // available 4.5 again -> alert 3
    expect(await alertRows(t.ctx.sql)).toHaveLength(3);
    const ids = (await alertRows(t.ctx.sql)).map((r) => r.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^msg_alert_[0-9A-Za-z]+$/);
  });

  test("a redeem-code or payment credit (source TOPUP) re-arms like an operator credit", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.reserve(6);
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    await t.ctx.ledger.topUp(t.accountId, USD(20), "redeem code rbatch_x", "TOPUP", "rcode_test1");
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
  });

  test("threshold changes: raising it above the balance does not re-arm a disarmed alert; lowering under the balance re-arms", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/threshold"));
    await t.reserve(6); // 4 -> alert
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(8)); // still below: stays disarmed
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    await t.reserve(1);
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(2)); // available 3 >= 2: re-armed
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    await t.reserve(1.5); // 1.5 < 2 -> alert 2
    expect(await alertRows(t.ctx.sql)).toHaveLength(2);
    await t.ctx.accounts.setAlertThreshold(t.accountId, null); // cleared: armed, nothing fires
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    await t.reserve(1);
    expect(await alertRows(t.ctx.sql)).toHaveLength(2);
  });

  test("no threshold: nothing is checked or written; no URL and no SMTP: disarmed, nothing queued", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.reserve(9.5);
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.ledger.topUp(t.accountId, USD(10), "credit"); // available 10.5: above
    await t.reserve(6); // 4.5: below, no URL, no SMTP
    expect(await armed(t.ctx.sql, t.accountId)).toBe(false);
    expect(await alertRows(t.ctx.sql)).toHaveLength(0);
    expect(await mailRows(t.ctx.sql)).toHaveLength(0);
  });

  test("the alert is written in the movement's transaction: a rolled-back reservation leaves no alert", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/rollback"));
    await expect(
      t.ctx.sql.tx(async (tx) => {
        await reserveUsd(t.ctx.ledger.in(tx), t.accountId, USD(6));
        throw new Error("the job insert failed");
      }),
    ).rejects.toThrow("the job insert failed");
    expect(await alertRows(t.ctx.sql)).toHaveLength(0);
    expect(await armed(t.ctx.sql, t.accountId)).toBe(true);
    await t.reserve(6);
    expect(await alertRows(t.ctx.sql)).toHaveLength(1);
  });

  test("another account's threshold and movements are its own", async () => {
    const t = await alertsApp({ balance: 10 });
    const other = (await t.ctx.accounts.createAccount("other", "USD")).account.id;
    await t.ctx.ledger.topUp(other, USD(10), "credit");
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/mine"));
    await t.ctx.ledger.reserve({
      accountId: other,
      keyId: null,
      modelId: null,
      requestId: null,
      source: "API",
      quotedUsdMicro: USD(9),
    });
    expect(await alertRows(t.ctx.sql)).toHaveLength(0);
    const o = (await t.ctx.accounts.getAccount(other))!;
    expect([o.alert_threshold_micro, o.alert_url, o.alert_armed]).toEqual([null, null, 1n]);
  });
});

describe("low-balance alert: the webhook", () => {
  test("one signed POST with the documented payload, verified with the account's secret", async () => {
    const t = await alertsApp({ balance: 10 });
    await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
    await t.ctx.alerts.setUrl(t.accountId, hooks.url("/signed"));
    const before = Date.now();
    await t.reserve(6.25);
    expect(await testDispatcher(t.ctx).runDue()).toBe(1);
    const hit = hooks.hits.find((h) => h.path === "/signed")!;
    const secret = await t.ctx.webhookSecrets.get(t.accountId);
    expect(() => verifyWebhook(secret, hit.headers, hit.body)).not.toThrow();
    await expect(
      (async () => verifyWebhook(await t.ctx.webhookSecrets.rotate(t.accountId), hit.headers, hit.body))(),
    ).rejects.toThrow();
    expect(hit.headers.get("content-type")).toBe("application/json");
    expect(hit.headers.get("webhook-id")).toBe((await alertRows(t.ctx.sql))[0]!.id);
    const body = JSON.parse(hit.body);
    expect(body).toEqual({
      event: "BALANCE_LOW",
      account_id: t.accountId,
      currency: "USD",
      balance_micro: "10000000",
      held_micro: "6250000",
      available_micro: "3750000",
      threshold_micro: "5000000",
      time: expect.any(String),
    });
    expect(Date.parse(body.time)).toBeGreaterThanOrEqual(before - 1000);
    expect((await alertRows(t.ctx.sql))[0]!.status).toBe("delivered");
  });

  test("a failing receiver is retried on the webhook schedule; job webhooks are untouched", async () => {
    const flaky = receiver((_p, n) => new Response(null, { status: n === 1 ? 503 : 200 }));
    try {
      const t = await alertsApp({ balance: 10 });
      await t.ctx.accounts.setAlertThreshold(t.accountId, USD(5));
      await t.ctx.alerts.setUrl(t.accountId, flaky.url("/retry"));
      await t.reserve(6);
      const d = testDispatcher(t.ctx);
      await d.runDue();
      expect((await alertRows(t.ctx.sql))[0]!.status).toBe("pending");
      await Bun.sleep(20);
      await d.runDue();
      expect((await alertRows(t.ctx.sql))[0]!.status).toBe("delivered");
      expect(flaky.count("/retry")).toBe(2);
      // The two deliveries carry the same webhook-id and the same body.
      expect(flaky.hits[0]!.headers.get("webhook-id")).toBe(flaky.hits[1]!.headers.get("webhook-id"));
      expect(flaky.hits[0]!.body).toBe(flaky.hits[1]!.body);
    } finally {
      flaky.stop();
    }
  });
});
