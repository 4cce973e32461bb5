// The folding of rollup deltas by the SQLite executor (src/db/rollups.ts), on a scratch table: which
// transactions fold, and what a savepoint's deltas become when it is released or rolled back at any
// depth. The ledger's and the jobs' rollups over group commits are in group-commit-rollups*.test.ts.
import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../src/db/database.ts";
import { addToRollup, type Rollup } from "../../src/db/rollups.ts";
import { countStatements, type Sql } from "../../src/db/sql.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";

interface Delta {
  k: string;
  n: number;
}

const counter: Rollup<Delta> = {
  add: (into, more) => {
    into.n += more.n;
  },
  write: async (sql, d) =>
    await sql.run("INSERT INTO c (k, n) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET n = n + ?2", [
      d.k,
      d.n,
    ]),
};

function scratch() {
  const db = openDatabase(":memory:");
  db.exec("CREATE TABLE c (k TEXT PRIMARY KEY, n INTEGER NOT NULL)");
  return new SqliteSql(db);
}

const add = (sql: Sql, k: string, n = 1) => addToRollup(sql, counter, k, { k, n });
const rows = async (sql: Sql) => await sql.all<{ k: string; n: bigint }>("SELECT k, n FROM c ORDER BY k");
const upserts = (sent: string[]) => sent.filter((s) => s.startsWith("INSERT INTO c")).length;

describe("rollups folded by a SQLite transaction", () => {
  test("a folding transaction writes one upsert per row, just before its COMMIT", async () => {
    const sql = scratch();
    const { count } = await countStatements(async () => {
      await sql.txCommitted(
        async (tx) => {
          for (let i = 0; i < 5; i++) await add(tx, "a", i + 1);
          await add(tx, "b");
          // Nothing written yet: the rows wait for the COMMIT.
          expect(await tx.all("SELECT * FROM c")).toEqual([]);
        },
        { foldRollups: true },
      );
    });
    expect(upserts(count.sent)).toBe(2);
    expect(count.sent.slice(-3)).toEqual([
      expect.stringMatching(/^INSERT INTO c/),
      expect.stringMatching(/^INSERT INTO c/),
      "COMMIT",
    ]);
    expect(await rows(sql)).toEqual([
      { k: "a", n: 15n },
      { k: "b", n: 1n },
    ]);
  });

  test("a savepoint's deltas join its parent's when released, and vanish when it rolls back, at any depth", async () => {
    const sql = scratch();
    const fail = new Error("rolled back");
    await sql.txCommitted(
      async (tx) => {
        await add(tx, "a");
        await tx.tx(async (sp) => {
          await add(sp, "a", 10);
          // Released inside a savepoint that then rolls back: gone with it.
          await sp.tx(async (inner) => await add(inner, "b", 100));
          await expect(
            sp.tx(async (inner) => {
              await add(inner, "a", 1000);
              throw fail;
            }),
          ).rejects.toBe(fail);
        });
        await expect(
          tx.tx(async (sp) => {
            await sp.tx(async (inner) => await add(inner, "c", 7));
            throw fail;
          }),
        ).rejects.toBe(fail);
      },
      { foldRollups: true },
    );
    expect(await rows(sql)).toEqual([
      { k: "a", n: 11n },
      { k: "b", n: 100n },
    ]);
  });

  test("a transaction that throws writes none of its deltas", async () => {
    const sql = scratch();
    const fail = new Error("rolled back");
    await expect(
      sql.txCommitted(
        async (tx) => {
          await add(tx, "a");
          throw fail;
        },
        { foldRollups: true },
      ),
    ).rejects.toBe(fail);
    expect(await rows(sql)).toEqual([]);
  });

  test("outside a folding transaction each delta is written at once", async () => {
    const sql = scratch();
    await add(sql, "a");
    expect(await rows(sql)).toEqual([{ k: "a", n: 1n }]);
    await sql.tx(async (tx) => {
      await add(tx, "a");
      await tx.tx(async (sp) => await add(sp, "a"));
      expect(await rows(tx)).toEqual([{ k: "a", n: 3n }]);
    });
    const { count } = await countStatements(
      async () => await sql.txCommitted(async (tx) => await add(tx, "a"), { foldRollups: false }),
    );
    expect(upserts(count.sent)).toBe(1);
    expect(await rows(sql)).toEqual([{ k: "a", n: 4n }]);
  });
});
