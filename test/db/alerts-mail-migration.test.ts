import { describe, expect, test } from "bun:test";
import { migrate } from "../../src/db/database.ts";
import { databaseAtVersion } from "../helpers/sql.ts";

describe("014 alerts and mail", () => {
  test("on a database with history: deliveries kept row for row, indexes kept, accounts armed", () => {
    const db = databaseAtVersion(13);
    db.exec(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at, alert_threshold_micro) VALUES ('acct_a', 'a', 'USD', 5, 0, 0, 10)",
    );
    db.exec(`INSERT INTO webhook_deliveries (id, request_id, account_id, url, event, status, attempts, next_attempt_at,
      last_attempt_at, last_status, last_error, created_at, delivered_at) VALUES
      ('msg_r1_completed', 'r1', 'acct_a', 'https://h.example/1', 'COMPLETED', 'delivered', 1, 5, 5, 200, NULL, 1, 5),
      ('msg_r2_failed', 'r2', 'acct_a', 'https://h.example/2', 'FAILED', 'pending', 3, 99, 7, 503, 'HTTP 503', 2, NULL)`);
    const before = db.query("SELECT * FROM webhook_deliveries ORDER BY id").all();
    expect(migrate(db)[0]).toBe(14);
    const after = db.query("SELECT * FROM webhook_deliveries ORDER BY id").all() as Record<string, unknown>[];
    expect(after.map((r) => r.payload)).toEqual([null, null]);
    expect(after.map(({ payload: _, ...rest }) => rest)).toEqual(before as never);
    const indexes = db
      .query(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_deliveries' AND sql IS NOT NULL ORDER BY name",
      )
      .all();
    expect(indexes).toEqual([{ name: "webhook_deliveries_due" }, { name: "webhook_deliveries_request" }]);
    expect(db.query("SELECT alert_url, alert_armed FROM accounts").get()).toEqual({
      alert_url: null,
      alert_armed: 1n,
    });
    // The event's shape is enforced: a job event needs its request, an account event its payload.
    const insert = (event: string, requestId: string | null, payload: string | null) =>
      db
        .query(
          `INSERT INTO webhook_deliveries (id, request_id, account_id, url, event, payload, status, next_attempt_at, created_at)
           VALUES (?, ?, 'acct_a', 'https://h.example', ?, ?, 'pending', 0, 0)`,
        )
        .run(`msg_${Math.random()}`, requestId, event, payload);
    expect(() => insert("BALANCE_LOW", null, "{}")).not.toThrow();
    expect(() => insert("BALANCE_LOW", null, null)).toThrow();
    expect(() => insert("BALANCE_LOW", "r3", "{}")).toThrow();
    expect(() => insert("COMPLETED", null, null)).toThrow();
    expect(() => insert("COMPLETED", "r3", "{}")).toThrow();
    expect(() => insert("SOMETHING", "r3", null)).toThrow();
    expect(() => db.exec("UPDATE accounts SET alert_armed = 2")).toThrow();
  });
});
