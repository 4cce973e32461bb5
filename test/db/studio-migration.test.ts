import { describe, expect, test } from "bun:test";
import { migrate } from "../../src/db/database.ts";
import { databaseAtVersion } from "../helpers/sql.ts";

describe("015 studio", () => {
  test("on a database with jobs and people: API jobs keep person_id null, people start at 0 open jobs", () => {
    const db = databaseAtVersion(14);
    db.exec(`INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('acct_a', 'a', 'USD', 10, 0, 0);
      INSERT INTO people (id, email, created_at) VALUES ('per_a', 'a@example.com', 0);
      INSERT INTO holds (id, account_id, source, currency, amount_micro, quoted_usd_micro, status, created_at)
        VALUES ('hold_1', 'acct_a', 'API', 'USD', 0, 0, 'open', 0);
      INSERT INTO jobs (id, seq, account_id, key_id, model_id, kind, source, provider, status, input, quote, hold_id,
        deadline_at, created_at) VALUES ('j1', 1, 'acct_a', 'key_x', 'm/a', 'image', 'API', 'sandbox', 'IN_QUEUE', '{}', '{}', 'hold_1', 9, 0);`);
    expect(migrate(db)[0]).toBe(15);
    expect(db.query("SELECT person_id FROM jobs").all()).toEqual([{ person_id: null }]);
    expect(db.query("SELECT open_jobs FROM people").all()).toEqual([{ open_jobs: 0n }]);
    expect(() => db.exec("UPDATE people SET open_jobs = -1")).toThrow(/CHECK/);
    expect(() => db.exec("UPDATE jobs SET person_id = 'per_nobody'")).toThrow(/FOREIGN KEY/);
  });
});
