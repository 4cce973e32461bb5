import { describe, expect, test } from "bun:test";
import {
  billing,
  lastDays,
  lastMonths,
  NO_KEY_NAME,
  overview,
  USAGE_CSV_HEADER,
  usage,
  usageCsv,
  usageSeries,
  WALLET_CSV_HEADER,
  walletCsv,
  walletPage,
} from "../../src/ledger/figures.ts";
import { countRows } from "../helpers/backend.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { csvObjects, csvText, parseCsv } from "../helpers/csv.ts";

const at = (iso: string) => Date.parse(iso) / 1000;

/** An app whose ledger clock the test sets, funded, with a second key, and a charge helper. */
async function setup() {
  const clock = { now: at("2026-03-10T12:00:00Z") };
  const t = await makeTestApp({ now: () => clock.now });
  const { ctx } = t;
  await ctx.ledger.topUp(t.account.id, 100_000_000n, "first");
  const second = await ctx.accounts.createKey(t.account.id, { name: "=ci", monthlyLimitMicro: 5_000_000n });
  /** Reserves and settles a charge at `when` (ledger clock). */
  const charge = async (
    when: string,
    o: { key?: string | null; model?: string | null; quote?: bigint; actual?: bigint },
  ) => {
    clock.now = at(when);
    const hold = await ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: o.key === undefined ? t.keyId : o.key,
      modelId: o.model === undefined ? "m/a" : o.model,
      requestId: null,
      source: o.key === null ? "STUDIO" : "API",
      quotedUsdMicro: o.quote ?? 1_000n,
    });
    await ctx.ledger.settle(hold.id, o.actual ?? o.quote ?? 1_000n);
    return hold;
  };
  return { t, ctx, clock, second, charge };
}

describe("overview", () => {
  test("balance, held, available, this month's spend (= GET /v1/account), per key against its limit, per model", async () => {
    const { t, ctx, clock, second, charge } = await setup();
    await charge("2026-02-27T10:00:00Z", { quote: 9_000n }); // last month: not this month's spend
    await charge("2026-03-02T10:00:00Z", { quote: 2_000n, model: "m/b" });
    await charge("2026-03-09T10:00:00Z", { key: second.keyId, quote: 1_500n, actual: 500n });
    clock.now = at("2026-03-10T12:00:00Z");
    const open = await ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: second.keyId,
      modelId: "m/a",
      requestId: null,
      source: "API",
      quotedUsdMicro: 700n,
    });
    const o = await overview(ctx, t.account.id);
    const api = await json<Record<string, string>>(await t.request("/v1/account"));
    expect(o.month).toBe("2026-03");
    expect(o.month_spent_micro).toBe(2_500n);
    expect(String(o.month_spent_micro)).toBe(api.month_spent_micro!);
    expect(o.balance_micro).toBe(100_000_000n - 9_000n - 2_500n);
    expect(o.held_micro).toBe(700n);
    expect(o.available_micro).toBe(o.balance_micro - 700n);
    expect(String(o.available_micro)).toBe(api.available_micro!);
    const k2 = o.keys.find((k) => k.key_id === second.keyId)!;
    expect(k2).toMatchObject({ name: "=ci", state: "active", spent_micro: 500n, held_micro: 700n });
    expect(k2.monthly_limit_micro).toBe(5_000_000n);
    expect(k2.remaining_micro).toBe(5_000_000n - 500n - 700n);
    const k1 = o.keys.find((k) => k.key_id === t.keyId)!;
    expect(k1).toMatchObject({ spent_micro: 2_000n, monthly_limit_micro: null, remaining_micro: null });
    expect(o.by_model).toEqual([
      { model_id: "m/b", spent_micro: 2_000n, calls: 1 },
      { model_id: "m/a", spent_micro: 500n, calls: 1 },
    ]);
    await ctx.ledger.release(open.id);
  });

  test("a key's state and last use (its newest job); a limit already spent shows 0 remaining", async () => {
    const { t, ctx, second, charge } = await setup();
    await charge("2026-03-05T00:00:00Z", { key: second.keyId, quote: 4_000_000n });
    await ctx.accounts.updateKey(t.account.id, second.keyId, { monthlyLimitMicro: 3_000_000n });
    expect(
      (await overview(ctx, t.account.id)).keys.find((k) => k.key_id === second.keyId)!.remaining_micro,
    ).toBe(0n);
    expect((await overview(ctx, t.account.id)).keys.every((k) => k.last_used_at === null)).toBe(true);
    const before = Date.now();
    const res = await t.request("/v1/queue/sandbox/image", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "p" }),
    });
    expect(res.status).toBe(202);
    await ctx.accounts.revokeKey(t.account.id, second.keyId);
    const keys = (await overview(ctx, t.account.id)).keys;
    const used = keys.find((k) => k.key_id === t.keyId)!;
    expect(Date.parse(used.last_used_at!)).toBeGreaterThanOrEqual(before - 1);
    expect(keys.find((k) => k.key_id === second.keyId)!.state).toBe("revoked");
  });

  test("the low-balance notice: none without a threshold, below only when balance < threshold", async () => {
    const { t, ctx } = await setup();
    expect((await overview(ctx, t.account.id)).alert).toEqual({ threshold_micro: null, below: false });
    const set = (v: bigint) =>
      ctx.sql.run("UPDATE accounts SET alert_threshold_micro = ? WHERE id = ?", [v, t.account.id]);
    await set(100_000_000n);
    expect((await overview(ctx, t.account.id)).alert).toEqual({
      threshold_micro: 100_000_000n,
      below: false,
    });
    await set(100_000_001n);
    expect((await overview(ctx, t.account.id)).alert).toEqual({ threshold_micro: 100_000_001n, below: true });
  });
});

describe("usage", () => {
  test("per day, month, key and model over a range; every day and month listed, zeros included", async () => {
    const { t, ctx, second, charge } = await setup();
    await charge("2026-01-31T23:59:59Z", { quote: 100n });
    await charge("2026-02-01T00:00:00Z", { quote: 200n, model: "m/b" });
    await charge("2026-02-01T13:00:00Z", { quote: 300n, key: second.keyId });
    await charge("2026-02-03T08:00:00Z", { quote: 400n, key: null, model: "m/b" });
    await charge("2026-02-04T00:00:00Z", { quote: 999n }); // outside the range
    const u = await usage(ctx, t.account.id, { from: "2026-01-31", to: "2026-02-03" });
    expect(u.days).toEqual(["2026-01-31", "2026-02-01", "2026-02-02", "2026-02-03"]);
    expect(u.months).toEqual(["2026-01", "2026-02"]);
    expect(u.total_micro).toBe(1_000n);
    expect(u.calls).toBe(4);
    expect(u.by_day.map((d) => d.spent_micro)).toEqual([100n, 500n, 0n, 400n]);
    expect(u.by_month).toEqual([
      { month: "2026-01", spent_micro: 100n, calls: 1 },
      { month: "2026-02", spent_micro: 900n, calls: 3 },
    ]);
    expect(u.by_model).toEqual([
      { model_id: "m/b", spent_micro: 600n, calls: 2 },
      { model_id: "m/a", spent_micro: 400n, calls: 2 },
    ]);
    expect(u.by_key.find((k) => k.key_id === null)).toEqual({
      key_id: null,
      key_name: NO_KEY_NAME,
      spent_micro: 400n,
      calls: 1,
    });
    expect(u.rows.map((r) => `${r.day} ${r.key_name} ${r.model_id} ${r.spent_micro}`)).toEqual([
      "2026-01-31 Default m/a 100",
      "2026-02-01 =ci m/a 300",
      "2026-02-01 Default m/b 200",
      `2026-02-03 ${NO_KEY_NAME} m/b 400`,
    ]);
  });

  test("chart series: days x models and months x keys, one value per label", async () => {
    const { t, ctx, second, charge } = await setup();
    await charge("2026-02-27T10:00:00Z", { quote: 100n });
    await charge("2026-03-01T10:00:00Z", { quote: 250n, model: "m/b", key: second.keyId });
    const u = await usage(ctx, t.account.id, { from: "2026-02-27", to: "2026-03-01" });
    expect(usageSeries(u, "day", "model")).toEqual({
      labels: ["2026-02-27", "2026-02-28", "2026-03-01"],
      series: [
        { id: "m/b", name: "m/b", values: [0n, 0n, 250n] },
        { id: "m/a", name: "m/a", values: [100n, 0n, 0n] },
      ],
    });
    expect(usageSeries(u, "month", "key")).toEqual({
      labels: ["2026-02", "2026-03"],
      series: [
        { id: second.keyId, name: "=ci", values: [0n, 250n] },
        { id: t.keyId, name: "Default", values: [100n, 0n] },
      ],
    });
  });

  test("the CSV: header, one record per day x key x model, decimal and micro amounts, names neutralised", async () => {
    const { t, ctx, second, charge } = await setup();
    await charge("2026-03-01T10:00:00Z", { quote: 1_234_567n, key: second.keyId });
    await charge("2026-03-02T10:00:00Z", { quote: 5n });
    const text = await csvText(
      usageCsv(await usage(ctx, t.account.id, { from: "2026-03-01", to: "2026-03-02" })),
    );
    expect(parseCsv(text)[0]).toEqual([...USAGE_CSV_HEADER]);
    expect(csvObjects(text)).toEqual([
      {
        date: "2026-03-01",
        month: "2026-03",
        key_id: second.keyId,
        key_name: "'=ci",
        model_id: "m/a",
        calls: "1",
        amount: "1.234567",
        amount_micro: "1234567",
        currency: "USD",
      },
      {
        date: "2026-03-02",
        month: "2026-03",
        key_id: t.keyId,
        key_name: "Default",
        model_id: "m/a",
        calls: "1",
        amount: "0.000005",
        amount_micro: "5",
        currency: "USD",
      },
    ]);
  });

  test("lastDays and lastMonths by the ledger's clock", async () => {
    const { ctx } = await setup();
    expect(lastDays(ctx, 30)).toEqual({ from: "2026-02-09", to: "2026-03-10" });
    expect(lastDays(ctx, 1)).toEqual({ from: "2026-03-10", to: "2026-03-10" });
    expect(lastMonths(ctx, 12)).toEqual({ from: "2025-04-01", to: "2026-03-10" });
  });

  test("a charge at a month's last second counts in that month in key_spend and in the entries", async () => {
    // A clock that moves one second at every read: the settlement's entries must still share one instant.
    let now = at("2026-04-29T00:00:00Z");
    const t = await makeTestApp({ now: () => now++ });
    await t.ctx.ledger.topUp(t.account.id, 10_000n, null);
    const hold = await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: t.keyId,
      modelId: "m",
      requestId: null,
      source: "API",
      quotedUsdMicro: 100n,
    });
    now = at("2026-04-30T23:59:59Z");
    await t.ctx.ledger.settle(hold.id, 60n);
    expect(await t.ctx.wallet.monthTotal(t.account.id, "2026-04")).toBe(60n);
    expect((await usage(t.ctx, t.account.id, { from: "2026-04-30", to: "2026-04-30" })).total_micro).toBe(
      60n,
    );
  });
});

describe("wallet and billing", () => {
  test("entries newest first with their running balance; pages cover every entry once", async () => {
    const { t, ctx, charge } = await setup();
    await charge("2026-03-01T10:00:00Z", { quote: 300n, actual: 100n });
    await ctx.ledger.adjust(t.account.id, -50n, "=correction");
    const first = await walletPage(ctx, t.account.id, { limit: 2 });
    expect(first.currency).toBe("USD");
    expect(first.entries.map((e) => e.kind)).toEqual(["adjustment", "release"]);
    expect(first.entries[0]).toMatchObject({
      source: "ADMIN",
      balance_delta_micro: -50n,
      balance_after_micro: 100_000_000n - 100n - 50n,
      reason: "=correction",
    });
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const p = await walletPage(ctx, t.account.id, { limit: 2, cursor });
      ids.push(...p.entries.map((e) => e.id));
      cursor = p.next_cursor;
    } while (cursor);
    expect(ids.length).toBe(5); // topup, hold, charge, release, adjustment
    expect(new Set(ids).size).toBe(5);
    // The running balance is the sum of the deltas up to each entry.
    const all = (await walletPage(ctx, t.account.id, { limit: 100 })).entries.reverse();
    let balance = 0n;
    for (const e of all) {
      balance += e.balance_delta_micro;
      expect(e.balance_after_micro).toBe(balance);
    }
  });

  test("filter by source: API, ADMIN; TOPUP (issue 16) is accepted and finds none yet", async () => {
    const { t, ctx, charge } = await setup();
    await charge("2026-03-01T10:00:00Z", { quote: 300n });
    expect((await walletPage(ctx, t.account.id, { source: "ADMIN" })).entries.map((e) => e.kind)).toEqual([
      "topup",
    ]);
    expect((await walletPage(ctx, t.account.id, { source: "API" })).entries.map((e) => e.kind)).toEqual([
      "charge",
      "hold",
    ]);
    expect((await walletPage(ctx, t.account.id, { source: "TOPUP" })).entries).toEqual([]);
    expect((await walletPage(ctx, t.account.id, { source: "" })).entries.length).toBe(3);
  });

  test("the wallet CSV: every entry, decimal and micro columns, signed deltas as numbers, reasons neutralised", async () => {
    const { t, ctx, charge } = await setup();
    await charge("2026-03-01T10:00:00Z", { quote: 300n });
    await ctx.ledger.adjust(t.account.id, -1_500_000n, '=HYPERLINK("x"), "y"');
    const rows = csvObjects(await csvText(walletCsv(ctx, t.account.id)));
    expect(parseCsv(await csvText(walletCsv(ctx, t.account.id)))[0]).toEqual([...WALLET_CSV_HEADER]);
    expect(rows.map((r) => r.kind)).toEqual(["adjustment", "charge", "hold", "topup"]);
    expect(rows[0]).toMatchObject({
      source: "ADMIN",
      amount: "1.50",
      amount_micro: "1500000",
      balance_delta: "-1.50",
      balance_delta_micro: "-1500000",
      reason: `'=HYPERLINK("x"), "y"`,
      currency: "USD",
    });
    expect(
      csvObjects(await csvText(walletCsv(ctx, t.account.id, { source: "API" }))).map((r) => r.kind),
    ).toEqual(["charge", "hold"]);
  });

  test("billing: the balance and the top-ups only (not adjustments or job entries)", async () => {
    const { t, ctx, charge } = await setup();
    await charge("2026-03-01T10:00:00Z", { quote: 300n });
    await ctx.ledger.adjust(t.account.id, 10n, "bonus");
    await ctx.ledger.topUp(t.account.id, 5_000_000n, "invoice 7");
    const b = await billing(ctx, t.account.id, { limit: 1 });
    expect(b.balance_micro).toBe(100_000_000n - 300n + 10n + 5_000_000n);
    expect(b.available_micro).toBe(b.balance_micro - b.held_micro);
    expect(b.topups.map((e) => [e.kind, e.source, e.amount_micro, e.reason])).toEqual([
      ["topup", "ADMIN", 5_000_000n, "invoice 7"],
    ]);
    const older = await billing(ctx, t.account.id, { limit: 1, cursor: b.next_cursor });
    expect(older.topups.map((e) => e.reason)).toEqual(["first"]);
    expect(older.next_cursor).toBeNull();
  });
});

describe("charges without a key (the studio's, issue 17)", () => {
  test('usage, GET /v1/account/spend and the month\'s spend all count them, under key_id null ("Studio (no key)")', async () => {
    const { t, ctx, charge } = await setup();
    await charge("2026-03-02T10:00:00Z", { quote: 100n });
    await charge("2026-03-03T10:00:00Z", { quote: 40n, key: null, model: "m/s" });
    await charge("2026-04-01T00:00:00Z", { quote: 7n, key: null, model: "m/s" }); // next month
    const u = await usage(ctx, t.account.id, { from: "2026-03-01", to: "2026-03-31" });
    expect(u.total_micro).toBe(140n);
    expect(u.by_key.map((k) => [k.key_id, k.spent_micro])).toEqual([
      [t.keyId, 100n],
      [null, 40n],
    ]);
    const spend = await json<{
      total_micro: string;
      by_key: { key_id: string | null; name: string; spent_micro: string }[];
      by_model: { model_id: string; spent_micro: string }[];
      by_key_and_model: { key_id: string | null; model_id: string; spent_micro: string; calls: number }[];
    }>(await t.request("/v1/account/spend?month=2026-03"));
    // The rule (docs/money.md, "Console figures"): a month's usage equals the API's spend.
    expect(BigInt(spend.total_micro)).toBe(u.total_micro);
    expect(spend.by_key.find((k) => k.key_id === null)).toMatchObject({
      name: NO_KEY_NAME,
      spent_micro: "40",
    });
    expect(spend.by_model.find((m) => m.model_id === "m/s")!.spent_micro).toBe("40");
    expect(spend.by_key_and_model.filter((r) => r.key_id === null)).toEqual([
      { key_id: null, model_id: "m/s", spent_micro: "40", calls: 1 },
    ]);
    expect(await ctx.wallet.monthTotal(t.account.id, "2026-03")).toBe(140n);
    expect(await ctx.wallet.monthTotal(t.account.id, "2026-04")).toBe(7n);
    // Key limits still count only their key's spend (key_spend has no row for a keyless charge).
    expect(await countRows(ctx.sql, "key_spend WHERE model_id = 'm/s'")).toBe(0);
  });
});
