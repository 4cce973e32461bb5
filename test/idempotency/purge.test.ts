import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { IDEMPOTENCY_TTL_MS, IdempotencyStore, PURGE_SQL } from "../../src/idempotency/idempotency.ts";
import { sqlOf } from "../helpers/sql.ts";

function store(now: number) {
  const db = openDatabase(":memory:");
  migrate(db);
  const insert = db.prepare(
    "INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, created_at) VALUES ('key_a', ?, 'fp', 'done', 200, '{}', ?)",
  );
  const count = () => Number((db.query("SELECT count(*) AS n FROM idempotency").get() as { n: bigint }).n);
  return { db, insert, count, idem: new IdempotencyStore(sqlOf(db), () => now) };
}

describe("idempotency purge", () => {
  test("deletes keys older than 24 h in batches, yielding between them, and keeps the rest", async () => {
    const now = Date.now();
    const s = store(now);
    s.db.transaction(() => {
      for (let i = 0; i < 2_500; i++) s.insert.run(`old-${i}`, now - IDEMPOTENCY_TTL_MS - 1 - i);
      for (let i = 0; i < 10; i++) s.insert.run(`new-${i}`, now - IDEMPOTENCY_TTL_MS + 60_000);
    })();
    const order: string[] = [];
    setImmediate(() => order.push(`request served with ${s.count()} keys left`));
    const purge = s.idem.purgeExpired().then((n) => order.push(`purged ${n}`));
    await purge;
    expect(s.count()).toBe(10);
    // Another callback ran between two batches: the purge never held the event loop for all of it.
    expect(order).toEqual(["request served with 1510 keys left", "purged 2500"]);
  });

  test("the purge reads the created_at index, not the whole table", () => {
    const s = store(Date.now());
    const plan = (s.db.query(`EXPLAIN QUERY PLAN ${PURGE_SQL}`).all() as { detail: string }[])
      .map((r) => r.detail)
      .join("; ");
    expect(plan).toMatch(/SEARCH idempotency USING (COVERING )?INDEX idempotency_created/);
    expect(plan).not.toMatch(/SCAN idempotency/);
  });
});
