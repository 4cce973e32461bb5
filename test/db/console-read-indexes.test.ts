import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { jsonList } from "../../src/db/store.ts";
import { WALLET_SQL } from "../../src/ledger/wallet.ts";
import { sqlOf } from "../helpers/sql.ts";

/** Migration 010: the console's reads use their indexes (query plans, not timings). */
describe("console read indexes (migrations 010, 015, 021)", () => {
  const db = openDatabase(":memory:");
  migrate(db);
  const plan = (sql: string, ...args: (string | number | bigint)[]) =>
    (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[])
      .map((r) => r.detail)
      .join(" / ");

  test("usage reads only the range's rollup rows (migration 027), never the charge entries", () => {
    const p = plan(WALLET_SQL.chargesByDay, "a", 0, 1);
    expect(p).toBe("SEARCH usage_daily USING PRIMARY KEY (account_id=? AND day>? AND day<?)");
  });

  test("credits (billing, the ADMIN/TOPUP filter) come from the partial credits index", () => {
    expect(plan(WALLET_SQL.creditsBySource, "a", 9n, "ADMIN", 10)).toContain(
      "USING INDEX ledger_entries_credits (account_id=? AND id<?)",
    );
  });

  test("requests by key and a key's last use walk jobs_by_key", () => {
    expect(
      plan(
        "SELECT * FROM jobs WHERE account_id = ? AND id < ? AND key_id = ? ORDER BY id DESC LIMIT ?",
        "a",
        "~",
        "k",
        5,
      ),
    ).toContain("USING INDEX jobs_by_key (key_id=? AND id<?)");
    expect(plan("SELECT created_at FROM jobs WHERE key_id = ? ORDER BY id DESC LIMIT 1", "k")).toContain(
      "USING INDEX jobs_by_key (key_id=?)",
    );
  });

  test("migration 015: a person's studio runs walk jobs_by_person; the month's no-key charges are covered", () => {
    expect(
      plan(
        "SELECT * FROM jobs WHERE person_id = ? AND id < ? AND account_id = ? ORDER BY id DESC LIMIT ?",
        "p",
        "~",
        "a",
        5,
      ),
    ).toContain("USING INDEX jobs_by_person (person_id=? AND id<?)");
    // The month's keyless spend: the month's rollup rows (days x keys x models), not its charges.
    expect(plan(WALLET_SQL.noKeyCharges, "a", 0, 1)).toContain(
      "SEARCH usage_daily USING PRIMARY KEY (account_id=? AND day>? AND day<?)",
    );
  });

  test("migration 021: a statement page walks the account's entries from the cursor, each hold by its key", () => {
    const p = plan(WALLET_SQL.statement, "a", 9n, "", 10);
    expect(p).toContain("USING INDEX ledger_entries_account (account_id=? AND id<?)");
    expect(p).toContain("USING INDEX sqlite_autoindex_holds_1 (id=?)");
    expect(p).not.toContain("TEMP B-TREE");
    // The page's job entries: by ledger_entries_hold, not the account's history.
    expect(plan(WALLET_SQL.jobEntries(jsonList(sqlOf(db))), '["h1"]')).toContain(
      "USING INDEX ledger_entries_hold (hold_id=?)",
    );
  });
});
