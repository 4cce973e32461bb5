// `gengate order list|refund` on a data dir (the server may be running): a paid order is prepared
// through the real stores, then listed and refunded by the binary (or the sources).
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createServices } from "../../src/app/services.ts";
import { openServerSql, runGengate, tempDir } from "../helpers/server.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function preparePaidOrder(): Promise<{ orderId: string; accountId: string }> {
  // A data dir no server has run on: its database is made and migrated here (either backend).
  const db = await openServerSql(dir, { create: true });
  try {
    const s = createServices(db.sql, "http://gengate.test");
    const { account } = await s.accounts.createAccount("buyer", "USD");
    const order = await s.payments.orders.create({
      accountId: account.id,
      personId: null,
      provider: "stripe",
      currency: "USD",
      amountMicro: 30_000_000n,
      now: Math.floor(Date.now() / 1000),
      ttlSeconds: 3600,
    });
    await s.sql.tx(async (tx) => {
      await s.payments.orders.in(tx).markPaid(order.id, Math.floor(Date.now() / 1000), "cs_test_cli");
      await s.ledger.in(tx).topUp(account.id, 30_000_000n, "Stripe payment cs_test_cli", "TOPUP", order.id);
    });
    return { orderId: order.id, accountId: account.id };
  } finally {
    await db.close();
  }
}

describe("gengate order", () => {
  test("list and refund; over-refunds and bad input are refused with one line", async () => {
    const { orderId, accountId } = await preparePaidOrder();
    const dd = ["--data-dir", dir];
    const list = await runGengate(["order", "list", "--json", ...dd]);
    expect(list.code).toBe(0);
    const { data } = JSON.parse(list.stdout) as {
      data: { id: string; status: string; amount_micro: string }[];
    };
    expect(data).toEqual([
      expect.objectContaining({ id: orderId, status: "paid", amount_micro: "30000000" }),
    ]);
    const human = await runGengate(["order", "list", "--status", "paid", ...dd]);
    expect(human.stdout).toContain(orderId);
    expect(human.stdout).toContain("30.00 USD");

    const refund = await runGengate([
      "order",
      "refund",
      orderId,
      "--amount",
      "12.5",
      "--reason",
      "duplicate purchase",
      "--json",
      ...dd,
    ]);
    expect(refund.code).toBe(0);
    expect(JSON.parse(refund.stdout).refunded_micro).toBe("12500000");
    const account = await runGengate(["account", "show", accountId, "--json", ...dd]);
    expect(JSON.parse(account.stdout).balance_micro).toBe("17500000");

    const tooMuch = await runGengate(["order", "refund", orderId, "--amount", "20", "--reason", "x", ...dd]);
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr.trim().split("\n")).toHaveLength(1);
    expect(tooMuch.stderr).toContain("At most 17.50 USD");
    const noReason = await runGengate(["order", "refund", orderId, ...dd]);
    expect(noReason.code).toBe(2);
    const badStatus = await runGengate(["order", "list", "--status", "nope", ...dd]);
    expect(badStatus.code).toBe(2);
    const rest = await runGengate(["order", "refund", orderId, "--reason", "the rest", "--json", ...dd]);
    expect(JSON.parse(rest.stdout).refunded_micro).toBe("30000000");
  });
});
