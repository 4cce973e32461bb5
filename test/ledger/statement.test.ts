// The wallet's statement store and service: a page at a large history costs what the first page
// costs (its query plans are in test/db/console-read-indexes.test.ts), a job that ends between two
// pages is not shown twice, and bad arguments are the contract's 400s.
import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { walletStatement } from "../../src/ledger/statement.ts";
import { Wallet } from "../../src/ledger/wallet.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { sqlOf } from "../helpers/sql.ts";
import { newAccount, openLedger } from "./ledger-helpers.ts";

describe("statement reads", () => {
  test("a page at 3,000 jobs reads its own rows: the first and an old page cost about the same", async () => {
    const db = openDatabase(":memory:");
    migrate(db);
    const { AccountStore } = await import("../../src/accounts/store.ts");
    const { Ledger } = await import("../../src/ledger/ledger.ts");
    const sql = sqlOf(db);
    const accounts = new AccountStore(sql);
    const ledger = new Ledger(sql, { billingUrl: "http://gengate.test/console/billing" });
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, 10_000_000_000n, "opening");
    for (let i = 0; i < 3000; i++) {
      const h = await ledger.reserve({
        accountId: account.id,
        keyId: null,
        modelId: "m",
        requestId: `r${i}`,
        source: "API",
        quotedUsdMicro: 1000n,
      });
      await ledger.settle(h.id, 400n);
    }
    const wallet = new Wallet(sql);
    const deps = { accounts, wallet };
    const t0 = performance.now();
    const first = await walletStatement(deps, account.id, { limit: 50 });
    const t1 = performance.now();
    let cursor = first.next_cursor;
    for (let i = 0; i < 55; i++)
      cursor = (await walletStatement(deps, account.id, { limit: 50, cursor })).next_cursor;
    const t2 = performance.now();
    const old = await walletStatement(deps, account.id, { limit: 50, cursor });
    const t3 = performance.now();
    expect(first.rows).toHaveLength(50);
    expect(old.rows).toHaveLength(50);
    expect(old.rows.every((r) => r.status === "charged" && r.entries.length === 3)).toBe(true);
    // Not a timing assertion (the machine is shared): printed for docs/money.md.
    console.log(
      `statement page at 3,000 jobs: first ${(t1 - t0).toFixed(2)} ms, 57th ${(t3 - t2).toFixed(2)} ms (55 pages ${(t2 - t1).toFixed(0)} ms)`,
    );
  }, 60_000);

  test("a job that ends between two pages moves to the top and is not shown twice", async () => {
    const { sql, accounts, ledger, close } = await openLedger("sqlite");
    try {
      const { account } = await newAccount(accounts);
      await ledger.topUp(account.id, 1_000_000n, "opening");
      const holds = [];
      for (let i = 0; i < 6; i++) {
        holds.push(
          await ledger.reserve({
            accountId: account.id,
            keyId: null,
            modelId: "m",
            requestId: `r${i}`,
            source: "STUDIO",
            quotedUsdMicro: 1000n,
          }),
        );
      }
      const deps = { accounts, wallet: new Wallet(sql) };
      const first = await walletStatement(deps, account.id, { limit: 3 });
      expect(first.rows.map((r) => [r.request_id, r.status])).toEqual([
        ["r5", "held"],
        ["r4", "held"],
        ["r3", "held"],
      ]);
      await ledger.settle(holds[1]!.id, 250n); // r1, on the next page, ends now
      await ledger.settle(holds[4]!.id, 1000n); // r4, already shown, ends now
      const second = await walletStatement(deps, account.id, { limit: 3, cursor: first.next_cursor });
      expect(second.rows.map((r) => [r.request_id, r.status])).toEqual([
        ["r2", "held"],
        ["r0", "held"],
        [null, "topup"],
      ]);
      const top = await walletStatement(deps, account.id, { limit: 2 });
      expect(top.rows.map((r) => [r.request_id, r.status, r.amount_micro])).toEqual([
        ["r4", "charged", -1000n],
        ["r1", "charged", -250n],
      ]);
      expect(top.rows[1]!.entries.map((e) => e.kind)).toEqual(["hold", "charge", "release"]);
    } finally {
      await close();
    }
  });

  test("a bad limit, cursor or source is 400 naming it; an unknown account is 404", async () => {
    const { sql, accounts, close } = await openLedger("sqlite");
    try {
      const { account } = await newAccount(accounts);
      const deps = { accounts, wallet: new Wallet(sql) };
      const refused = async (
        q: Parameters<typeof walletStatement>[2] | null,
        param: string,
        code = "validation_error",
      ) => {
        const err = await walletStatement(deps, q === null ? "acct_nope" : account.id, q ?? {}).catch(
          (e) => e,
        );
        expect(err).toBeInstanceOf(DomainError);
        expect([(err as DomainError).code, (err as DomainError).param]).toEqual([code, param]);
      };
      for (const limit of [0, 101, 1.5]) await refused({ limit }, "limit");
      for (const cursor of ["abc", "-1", "0", "1".repeat(19)]) await refused({ cursor }, "cursor");
      await refused({ source: "EVIL" }, "source");
      await refused(null, "account_id", "not_found");
    } finally {
      await close();
    }
  });
});
