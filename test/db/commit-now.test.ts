import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  countStatements,
  nullIfChecked,
  type Sql,
  SqlConstraintError,
  SqlTxEndedError,
} from "../../src/db/sql.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

// Sql.commitNow: the COMMIT sent behind a transaction's last statements (PostgreSQL), so the rows
// they lock are held for no round trip (docs/performance.md "Issue 36: PostgreSQL submits with one
// key"). Counts of round trips, never timings.

const postgres = dialects().includes("postgres") ? ["postgres" as const] : [];

describe.each(postgres)("commitNow on %s", (dialect) => {
  let t: TestSql;
  let sql: Sql;
  const balance = async () =>
    (await sql.get<{ b: bigint }>("SELECT balance AS b FROM wallet WHERE id = 1"))?.b;
  const rows = async () => (await sql.get<{ n: bigint }>("SELECT count(*) AS n FROM log"))?.n;

  beforeAll(async () => {
    t = await openTestSql(dialect);
    sql = t.sql;
    await sql.run(
      "CREATE TABLE wallet (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL CHECK (balance >= 0))",
    );
    await sql.run("CREATE TABLE log (id BIGINT PRIMARY KEY)");
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    await sql.run("DELETE FROM log");
    await sql.run("DELETE FROM wallet");
    await sql.run("INSERT INTO wallet VALUES (1, 10)");
  });

  test("BEGIN, the statements and the COMMIT share one round trip; the writes are committed", async () => {
    const { value, count } = await countStatements(() =>
      sql.tx(async (tx) => {
        const sent = [
          tx.run("INSERT INTO log VALUES (?)", [1]),
          tx.run("UPDATE wallet SET balance = balance - ? WHERE id = 1", [4]),
        ];
        const commit = tx.commitNow?.();
        expect(commit).toBeInstanceOf(Promise);
        await Promise.all(sent);
        return "done";
      }),
    );
    expect(value).toBe("done");
    expect(count.sent).toEqual([
      "BEGIN",
      "+ INSERT INTO log VALUES (?)",
      "+ UPDATE wallet SET balance = balance - ? WHERE id = 1",
      "+ COMMIT",
    ]);
    expect(count.statements + count.control - count.pipelined).toBe(1);
    expect(await balance()).toBe(6n);
    expect(await rows()).toBe(1n);
  });

  test("a statement failing before it turns the COMMIT into a ROLLBACK: nothing is written", async () => {
    const refused = await sql
      .tx(async (tx) => {
        const sent = [
          tx.run("INSERT INTO log VALUES (?)", [1]),
          tx.run("UPDATE wallet SET balance = balance - ? WHERE id = 1", [11]).catch(nullIfChecked),
          tx.run("INSERT INTO log VALUES (?)", [2]),
        ];
        void tx.commitNow?.();
        const [, moved, after] = await Promise.allSettled(sent);
        // The refusal as its "no row"; the statement after it was not run.
        expect(moved).toEqual({ status: "fulfilled", value: null });
        expect(after?.status).toBe("rejected");
        throw new Error("refused");
      })
      .catch((e: Error) => e.message);
    expect(refused).toBe("refused");
    expect(await balance()).toBe(10n);
    expect(await rows()).toBe(0n);
  });

  test("a body that resolves although its transaction was rolled back rejects", async () => {
    const err = await sql
      .tx(async (tx) => {
        const write = tx.run("UPDATE wallet SET balance = -1 WHERE id = 1").catch((e) => e);
        void tx.commitNow?.();
        expect(await write).toBeInstanceOf(SqlConstraintError);
      })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toContain("rolled back");
    expect(await balance()).toBe(10n);
  });

  test("nothing may be sent after it; a savepoint cannot send it; outside a transaction it is null", async () => {
    await sql.tx(async (tx) => {
      await tx.tx(async (sp) => {
        expect(sp.commitNow?.()).toBeNull();
      });
      const commit = tx.commitNow?.();
      expect(tx.commitNow?.()).toBeNull();
      await expect(tx.run("INSERT INTO log VALUES (?)", [1])).rejects.toBeInstanceOf(SqlTxEndedError);
      await commit;
    });
    expect(sql.commitNow?.()).toBeNull();
    expect(await rows()).toBe(0n);
  });
});

describe("commitNow on sqlite", () => {
  test("absent: the group commit shares its COMMIT, the body's end commits", async () => {
    const t = await openTestSql("sqlite");
    try {
      await t.sql.tx(async (tx) => {
        expect(tx.commitNow).toBeUndefined();
      });
    } finally {
      await t.close();
    }
  });
});
