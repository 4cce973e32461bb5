import { describe, expect, test } from "bun:test";
import { httpStatus } from "../../src/http/errors.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { sqlOf } from "../helpers/sql.ts";
import { checkInvariants, makeLedger, newAccount, reserveUsd } from "./ledger-helpers.ts";

const USD = 1_000_000n;

describe("ledger: happy paths", () => {
  test("top-up, reserve, settle below the hold releases the rest", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account, keyId } = await newAccount(accounts);
    await ledger.topUp(account.id, 10n * USD, "welcome");
    const hold = await ledger.reserve({
      accountId: account.id,
      keyId,
      modelId: "sandbox/video",
      requestId: "r1",
      source: "API",
      quotedUsdMicro: 400_000n,
    });
    let a = (await accounts.getAccount(account.id))!;
    expect(a.balance_micro).toBe(10n * USD);
    expect(a.held_micro).toBe(400_000n);
    const r = await ledger.settle(hold.id, 250_000n);
    expect(r.changed).toBe(true);
    expect(r.hold.charged_micro).toBe(250_000n);
    a = (await accounts.getAccount(account.id))!;
    expect(a.balance_micro).toBe(10n * USD - 250_000n);
    expect(a.held_micro).toBe(0n);
    const kinds = db.query("SELECT kind, source, amount_micro FROM ledger_entries ORDER BY id").all();
    expect(kinds).toEqual([
      { kind: "topup", source: "ADMIN", amount_micro: 10n * USD },
      { kind: "hold", source: "API", amount_micro: 400_000n },
      { kind: "charge", source: "API", amount_micro: 250_000n },
      { kind: "release", source: "API", amount_micro: 150_000n },
    ]);
    expect(await ledger.keyUsage(keyId)).toEqual({ spent: 250_000n, held: 0n });
    expect(await checkInvariants(db)).toEqual([]);
  });

  test("a charge above the hold is capped at the hold", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, USD, null);
    const hold = await reserveUsd(ledger, account.id, 100n);
    expect((await ledger.settle(hold.id, 10_000n)).hold.charged_micro).toBe(100n);
    expect((await accounts.getAccount(account.id))!.balance_micro).toBe(USD - 100n);
    expect(await checkInvariants(db)).toEqual([]);
  });

  test("release charges nothing; a second settle or release changes no money", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, USD, null);
    const hold = await reserveUsd(ledger, account.id, 300n);
    expect((await ledger.release(hold.id)).changed).toBe(true);
    const before = db.query("SELECT count(*) AS n FROM ledger_entries").get();
    expect((await ledger.release(hold.id)).changed).toBe(false);
    expect((await ledger.settle(hold.id, 100n)).changed).toBe(false);
    expect(db.query("SELECT count(*) AS n FROM ledger_entries").get()).toEqual(before);
    expect((await accounts.getAccount(account.id))!.balance_micro).toBe(USD);
    expect(await checkInvariants(db)).toEqual([]);
  });

  test("RUB: the rate fixed at reservation is used at settlement even after it changes", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts, "RUB");
    db.query(
      "INSERT INTO fx_rates (currency, rate_micro, source, updated_at) VALUES ('RUB', 90000000, 'test', 0)",
    ).run();
    await ledger.topUp(account.id, 1000n * USD, null);
    const hold = await reserveUsd(ledger, account.id, 1_000_001n);
    // ceil(1_000_001 * 90) = 90_000_090 micro-RUB
    expect(hold.amount_micro).toBe(90_000_090n);
    expect(hold.fx_rate_micro).toBe(90_000_000n);
    db.query("UPDATE fx_rates SET rate_micro = 120000000").run();
    const r = await ledger.settle(hold.id, 500_000n);
    expect(r.hold.charged_micro).toBe(45_000_000n);
    expect(r.hold.charged_usd_micro).toBe(500_000n);
    expect(await checkInvariants(db)).toEqual([]);
  });
});

describe("ledger: refusals change no money", () => {
  const err = async (fn: () => unknown): Promise<DomainError> => {
    try {
      await fn();
    } catch (e) {
      if (e instanceof DomainError) return e;
      throw e;
    }
    throw new Error("expected an DomainError");
  };

  test("insufficient balance is 402 naming the billing URL", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, 100n, null);
    const e = await err(async () => await reserveUsd(ledger, account.id, 101n));
    expect(e.code).toBe("insufficient_balance");
    expect(httpStatus(e.code)).toBe(402);
    expect(e.message).toContain("http://gengate.test/console/billing");
    expect((await accounts.getAccount(account.id))!.held_micro).toBe(0n);
    expect(await checkInvariants(db)).toEqual([]);
  });

  test("the key's monthly limit counts spent + held + the new estimate", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account, keyId } = await newAccount(accounts);
    db.query("UPDATE api_keys SET monthly_limit_micro = 1000 WHERE id = ?").run(keyId);
    await ledger.topUp(account.id, USD, null);
    const h1 = await ledger.reserve({
      accountId: account.id,
      keyId,
      modelId: "m",
      requestId: null,
      source: "API",
      quotedUsdMicro: 600n,
    });
    await ledger.settle(h1.id, 500n);
    await ledger.reserve({
      accountId: account.id,
      keyId,
      modelId: "m",
      requestId: null,
      source: "API",
      quotedUsdMicro: 400n,
    });
    const e = await err(
      async () =>
        await ledger.reserve({
          accountId: account.id,
          keyId,
          modelId: "m",
          requestId: null,
          source: "API",
          quotedUsdMicro: 101n,
        }),
    );
    expect(e.code).toBe("key_limit_reached");
    expect(httpStatus(e.code)).toBe(402);
    await ledger.reserve({
      accountId: account.id,
      keyId,
      modelId: "m",
      requestId: null,
      source: "API",
      quotedUsdMicro: 100n,
    });
    expect(await checkInvariants(db)).toEqual([]);
  });

  test("a RUB account without a rate cannot be priced", async () => {
    const { accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts, "RUB");
    await ledger.topUp(account.id, USD, null);
    expect((await err(async () => await reserveUsd(ledger, account.id, 1n))).code).toBe("unpriceable");
  });

  test("an adjustment may not uncover open holds; zero and unknown accounts are refused", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, 1000n, null);
    await reserveUsd(ledger, account.id, 800n);
    expect((await err(async () => await ledger.adjust(account.id, -201n, "oops"))).code).toBe("conflict");
    await ledger.adjust(account.id, -200n, "refund of a double top-up");
    expect((await err(async () => await ledger.adjust(account.id, 0n, "x"))).code).toBe("validation_error");
    expect((await err(async () => await ledger.topUp(account.id, -5n, null))).code).toBe("validation_error");
    expect((await err(async () => await ledger.topUp("acct_nope", 5n, null))).code).toBe("not_found");
    expect((await accounts.getAccount(account.id))!.balance_micro).toBe(800n);
    expect(await checkInvariants(db)).toEqual([]);
  });
});

describe("rollup invariant (migration 027)", () => {
  test("usage_daily and key_spend equal the charge entries; a rollup off by one micro-unit is reported", async () => {
    const { db, accounts, ledger } = makeLedger();
    const { account, keyId } = await newAccount(accounts);
    await ledger.topUp(account.id, USD, null);
    const sql = sqlOf(db);
    const hold = await ledger.reserve({
      accountId: account.id,
      keyId,
      modelId: "m/x",
      requestId: "r1",
      source: "API",
      quotedUsdMicro: 5_000n,
    });
    await ledger.settle(hold.id, 3_000n);
    expect(await checkInvariants(sql)).toEqual([]);
    await sql.run("UPDATE usage_daily SET spent_micro = spent_micro + 1");
    expect((await checkInvariants(sql)).join("\n")).toContain("usage_daily");
    await sql.run("UPDATE usage_daily SET spent_micro = spent_micro - 1");
    await sql.run("UPDATE key_spend SET calls = calls + 1");
    expect((await checkInvariants(sql)).join("\n")).toContain("key_spend");
  });
});
