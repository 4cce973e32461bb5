import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { MARGIN_GROUPS, marginSql } from "../../src/ledger/margin-store.ts";

/** Migration 026: the margins report reads only the range's jobs (query plans, not timings). */
describe("margins report index (migration 026)", () => {
  const db = openDatabase(":memory:");
  migrate(db);
  const plan = (sql: string) =>
    (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(0, 1) as { detail: string }[])
      .map((r) => r.detail)
      .join(" / ");

  test("every grouping walks jobs_completed over the range, each hold (and account) by its key", () => {
    for (const by of MARGIN_GROUPS) {
      const p = plan(marginSql(by));
      expect(p).toContain("USING INDEX jobs_completed (completed_at>? AND completed_at<?)");
      expect(p).toContain("SEARCH h USING INDEX sqlite_autoindex_holds_1 (id=?)");
      expect(p).not.toMatch(/SCAN (j|h)\b/);
      if (by === "account") expect(p).toContain("SEARCH a USING INDEX sqlite_autoindex_accounts_1 (id=?)");
    }
  });
});
