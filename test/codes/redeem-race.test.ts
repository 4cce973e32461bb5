import { afterEach, describe, expect, test } from "bun:test";
import { createServices } from "../../src/app/services.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { countRows } from "../helpers/backend.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

// N redeems of one code at once, in one process over one database (the separate-process race on one
// SQLite file is in security.test.ts). On PostgreSQL (READ COMMITTED, a pool of 10 connections) every
// contender reads the code unredeemed before the first commits, so only the compare-and-swap
// `UPDATE redeem_codes ... WHERE redeemed_at IS NULL` (RedeemCodeStore.markRedeemed) keeps the
// losers from crediting: without that guard they reach the ledger's unique index on ref_id and fail
// with a constraint error (a 500) instead of 400 invalid_code. On SQLite the transactions run one
// after another, so the second reads the code redeemed: the same outcome, by another road.

const N = 8;

let opened: TestSql | null = null;
afterEach(async () => {
  await opened?.close();
  opened = null;
});

describe.each(dialects())("one code redeemed by many at once on %s", (dialect) => {
  test(`${N} concurrent redeems: one credit, ${N - 1} invalid_code, one ledger entry`, async () => {
    opened = await openTestSql(dialect, { migrated: true });
    const s = createServices(opened.sql, "http://gengate.test");
    const a = (await s.accounts.createAccount("a", "USD")).account.id;
    const b = (await s.accounts.createAccount("b", "USD")).account.id;
    const { codes } = await s.codes.createBatchFrom({ amount: "7", currency: "USD" });
    const outcomes = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        s.codes.redeem(i % 2 ? a : b, codes[0]!, `key_${i}`).then(
          () => "ok",
          (err: unknown) => (err instanceof DomainError ? err.code : String(err)),
        ),
      ),
    );
    expect(outcomes.sort()).toEqual([...Array(N - 1).fill("invalid_code"), "ok"]);
    const balances = [
      (await s.accounts.getAccount(a))!.balance_micro,
      (await s.accounts.getAccount(b))!.balance_micro,
    ];
    expect(balances[0]! + balances[1]!).toBe(7_000_000n);
    expect(await countRows(opened.sql, "ledger_entries WHERE source = 'TOPUP'")).toBe(1);
    expect(await countRows(opened.sql, "redeem_codes WHERE redeemed_at IS NOT NULL")).toBe(1);
  });
});
