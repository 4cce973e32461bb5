import { afterAll, describe, expect, test } from "bun:test";
import { afterCommit } from "../../src/db/sql.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

/** `afterCommit`: what a transaction defers runs once it committed, never when it rolled back. */
const opened: TestSql[] = [];
afterAll(async () => {
  for (const t of opened.splice(0)) await t.close();
});

describe.each(dialects())("afterCommit (%s)", (dialect) => {
  /** A database of the dialect with a table `t`, and the list the deferred calls write to. */
  async function withTable() {
    const t = await openTestSql(dialect);
    opened.push(t);
    await t.sql.run("CREATE TABLE t (v BIGINT NOT NULL)");
    return { sql: t.sql, seen: [] as string[] };
  }

  test("runs after the commit (the row visible then), at once outside a transaction, never after a rollback", async () => {
    const { sql, seen } = await withTable();
    afterCommit(() => seen.push("outside"));
    expect(seen).toEqual(["outside"]);

    const counted: Promise<bigint>[] = [];
    await sql.tx(async (tx) => {
      await tx.run("INSERT INTO t (v) VALUES (1)");
      afterCommit(() => {
        seen.push("committed");
        // Through the root: allowed now, and the row is there.
        counted.push(sql.get<{ n: bigint }>("SELECT count(*) AS n FROM t").then((r) => r!.n));
      });
      await tx.tx(async (sp) => {
        await sp.run("INSERT INTO t (v) VALUES (2)");
        afterCommit(() => seen.push("savepoint"));
      });
      expect(seen).toEqual(["outside"]);
    });
    expect(seen).toEqual(["outside", "committed", "savepoint"]);
    expect(await counted[0]).toBe(2n);

    await expect(
      sql.tx(async (tx) => {
        await tx.run("INSERT INTO t (v) VALUES (3)");
        afterCommit(() => seen.push("rolled back"));
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(seen).toEqual(["outside", "committed", "savepoint"]);
  });

  test("a rolled-back savepoint's calls are dropped, a released one's run at the commit, in order", async () => {
    // A group commit's item is a savepoint: one that failed after its settlement must not count it
    // (metrics, hints) when the others commit.
    const { sql, seen } = await withTable();
    await sql.tx(async (tx) => {
      afterCommit(() => seen.push("before"));
      await expect(
        tx.tx(async (sp) => {
          await sp.run("INSERT INTO t (v) VALUES (1)");
          afterCommit(() => seen.push("rolled back"));
          await sp.tx(async () => {
            afterCommit(() => seen.push("inside the rolled-back one"));
          });
          throw new Error("no");
        }),
      ).rejects.toThrow("no");
      await tx.tx(async (sp) => {
        await sp.run("INSERT INTO t (v) VALUES (2)");
        afterCommit(() => seen.push("released"));
        await sp.tx(async () => {
          afterCommit(() => seen.push("nested"));
        });
      });
      afterCommit(() => seen.push("after"));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(["before", "released", "nested", "after"]);
  });
});
