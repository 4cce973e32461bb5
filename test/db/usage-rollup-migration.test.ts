import { describe, expect, test } from "bun:test";
import { migrate } from "../../src/db/database.ts";
import { PG_MIGRATIONS } from "../../src/db/migrate-postgres.ts";
import { MIGRATIONS } from "../../src/db/migrations.ts";
import type { Sql } from "../../src/db/sql.ts";
import { dialects, openTestSql } from "../helpers/postgres.ts";
import { databaseAtVersion, sqlOf } from "../helpers/sql.ts";
import { rollupProblems } from "../ledger/ledger-helpers.ts";

const DAY = 86_400;
// The history below is written around the ledger, so key_spend (not this migration's) is not kept.
const usageProblems = async (sql: Sql) =>
  (await rollupProblems(sql)).filter((p) => p.startsWith("usage_daily"));

/**
 * History as a database before migration 027 holds it: charge entries over three days, two keys and
 * none, two models and none, plus holds, releases and credits the rollup must not count.
 */
async function writeHistory(sql: Sql) {
  await sql.run(
    "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('acct_a', 'a', 'USD', 0, 0, 0)",
  );
  const entry = (kind: string, amount: number, key: string | null, model: string | null, at: number) =>
    sql.run(
      `INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
         balance_after_micro, held_after_micro, key_id, model_id, created_at)
       VALUES ('acct_a', ?, 'API', ?, 0, 0, 0, 0, ?, ?, ?)`,
      [kind, amount, key, model, at],
    );
  for (let i = 0; i < 60; i++) {
    const at = 20_000 * DAY + (Math.floor(i / 9) % 3) * DAY + i * 17; // three UTC days
    const key = [null, "key_1", "key_2"][i % 3]!;
    const model = ["m/a", "m/b", null][Math.floor(i / 3) % 3]!;
    await entry("hold", 100 + i, key, model, at);
    await entry("charge", i % 7 === 0 ? 0 : 50 + i, key, model, at);
    await entry("release", 50, key, model, at);
  }
  await entry("topup", 1_000, null, null, 20_000 * DAY);
}

describe("migration 027 (usage_daily) on a database with history", () => {
  test("SQLite: migrating from 26 backfills the rollup from the charge entries, to the micro-unit", async () => {
    const db = databaseAtVersion(26);
    const sql = sqlOf(db);
    await writeHistory(sql);
    expect(migrate(db)).toContain(27);
    expect(await usageProblems(sql)).toEqual([]);
    // 3 days x 3 keys (one "no key") x 3 models (one "no model"): every cell has charges.
    expect(db.query("SELECT count(*) AS n FROM usage_daily").get()).toEqual({ n: 27n });
    const total = db.query("SELECT sum(spent_micro) AS s, sum(calls) AS c FROM usage_daily").get();
    const charges = db
      .query("SELECT sum(amount_micro) AS s, count(*) AS c FROM ledger_entries WHERE kind = 'charge'")
      .get();
    expect(total).toEqual(charges);
    expect(
      db.query("SELECT count(*) AS n FROM usage_daily WHERE key_id = '' AND model_id = ''").get(),
    ).toEqual({
      n: 3n,
    });
  });

  describe.each(dialects())("the backfill statement (%s)", (dialect) => {
    test("regroups the charge entries exactly", async () => {
      const t = await openTestSql(dialect, { migrated: true });
      try {
        await writeHistory(t.sql);
        const file = (dialect === "sqlite" ? MIGRATIONS : PG_MIGRATIONS).find((m) => m.version === 27)!.sql;
        const backfill = file.slice(file.indexOf("INSERT INTO usage_daily"));
        // Wrong before it runs (the rows were written around the ledger), right after.
        expect((await usageProblems(t.sql)).length).toBeGreaterThan(0);
        await t.sql.run(backfill);
        expect(await usageProblems(t.sql)).toEqual([]);
      } finally {
        await t.close();
      }
    });
  });
});
