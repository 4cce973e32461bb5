import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { type Sql, SqlConstraintError, SqlNestingError, SqlTxEndedError } from "../../src/db/sql.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

// The same cases on both executors: what a store may rely on whichever backend runs it.
// (docs/scale-out.md "The Sql port").

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;

// The portable subset of both dialects' DDL (the real schemas are in src/db/migrations*/).
const TABLES = [
  `CREATE TABLE items (
     id BIGINT PRIMARY KEY, n BIGINT, s TEXT, b BLOB_TYPE, flag BIGINT NOT NULL DEFAULT 0,
     uniq TEXT UNIQUE, parent BIGINT REFERENCES items(id))`,
  "CREATE TABLE wallet (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL CHECK (balance >= 0))",
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(dialects())("Sql on %s", (dialect) => {
  let t: TestSql;
  let sql: Sql;

  beforeAll(async () => {
    t = await openTestSql(dialect);
    sql = t.sql;
    for (const ddl of TABLES)
      await sql.run(ddl.replace("BLOB_TYPE", dialect === "sqlite" ? "BLOB" : "BYTEA"));
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    await sql.run("DELETE FROM items");
    await sql.run("DELETE FROM wallet");
  });

  test("the dialect is named", () => {
    expect(sql.dialect).toBe(dialect);
  });

  test("64-bit integers round-trip as bigint, extremes included; numbers bind as integers", async () => {
    for (const [id, n] of [
      [1n, 0n],
      [2n, -1n],
      [3n, MAX],
      [4n, MIN],
    ] as const)
      await sql.run("INSERT INTO items (id, n) VALUES (?, ?)", [id, n]);
    await sql.run("INSERT INTO items (id, n) VALUES (?, ?)", [5, 2 ** 40]);
    const rows = await sql.all<{ id: bigint; n: bigint }>("SELECT id, n FROM items ORDER BY id");
    expect(rows).toEqual([
      { id: 1n, n: 0n },
      { id: 2n, n: -1n },
      { id: 3n, n: MAX },
      { id: 4n, n: MIN },
      { id: 5n, n: 1099511627776n },
    ]);
    expect(await sql.get("SELECT n FROM items WHERE n = ?", [MAX])).toEqual({ n: MAX });
  });

  test("expressions come back with the same types: counts, sums, literals, comparisons, reals", async () => {
    await sql.run("INSERT INTO items (id, n) VALUES (1, 5), (2, 7)");
    const row = await sql.get(
      `SELECT count(*) AS c, sum(n) AS s, coalesce(sum(CASE WHEN n > 100 THEN n END), 0) AS z,
              1 AS one, max(n) > 6 AS cmp, 1.5 AS real, NULL AS absent FROM items`,
    );
    expect(row).toEqual({ c: 2n, s: 12n, z: 0n, one: 1n, cmp: 1n, real: 1.5, absent: null });
    expect(await sql.get("SELECT sum(n) AS s FROM items WHERE id > 99")).toEqual({ s: null });
  });

  test("blobs, text and NULL round-trip; booleans bind as 1/0", async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    await sql.run("INSERT INTO items (id, s, b, flag) VALUES (?, ?, ?, ?)", [1n, "héllo ✓ 😀", bytes, true]);
    await sql.run("INSERT INTO items (id, s, b, flag) VALUES (?, ?, ?, ?)", [2n, null, null, false]);
    const rows = await sql.all<{ s: string | null; b: Uint8Array | null; flag: bigint }>(
      "SELECT s, b, flag FROM items ORDER BY id",
    );
    expect(rows).toEqual([
      { s: "héllo ✓ 😀", b: bytes, flag: 1n },
      { s: null, b: null, flag: 0n },
    ]);
    expect(rows[0]!.b).toBeInstanceOf(Uint8Array);
    expect(rows[0]!.b!.constructor).toBe(Uint8Array);
  });

  test("get: the first row or null; all: [] when nothing matches", async () => {
    expect(await sql.get("SELECT id FROM items WHERE id = ?", [1n])).toBeNull();
    expect(await sql.all("SELECT id FROM items")).toEqual([]);
  });

  test("? inside literals, quoted names and comments is not a placeholder", async () => {
    const row = await sql.get(
      `SELECT '?' AS q, 'it''s ?' AS esc, ? AS p /* ? */, "s" AS "?x" FROM (SELECT 'a' AS "s") sub -- ?
       WHERE 1 = ?`,
      ["val", 1n],
    );
    expect(row).toEqual({ q: "?", esc: "it's ?", p: "val", "?x": "a" });
  });

  test("run counts the rows written; ON CONFLICT DO NOTHING counts 0", async () => {
    expect(await sql.run("INSERT INTO items (id, n) VALUES (1, 1), (2, 1), (3, 2)")).toEqual({ changes: 3 });
    expect(await sql.run("UPDATE items SET n = n + 10 WHERE n = ?", [1n])).toEqual({ changes: 2 });
    expect(await sql.run("UPDATE items SET n = 0 WHERE id = ?", [99n])).toEqual({ changes: 0 });
    expect(await sql.run("INSERT INTO items (id, n) VALUES (1, 5) ON CONFLICT DO NOTHING")).toEqual({
      changes: 0,
    });
    expect(await sql.run("UPDATE items SET n = 0 RETURNING id")).toEqual({ changes: 3 });
    expect(await sql.run("DELETE FROM items WHERE id >= ?", [2n])).toEqual({ changes: 2 });
  });

  test("RETURNING and ON CONFLICT DO UPDATE", async () => {
    const inserted = await sql.all("INSERT INTO items (id, n) VALUES (?, ?), (?, ?) RETURNING id, n", [
      1n,
      10n,
      2n,
      20n,
    ]);
    expect(inserted).toEqual([
      { id: 1n, n: 10n },
      { id: 2n, n: 20n },
    ]);
    const upsert = await sql.get(
      "INSERT INTO items (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = items.n + excluded.n RETURNING n",
      [1n, 5n],
    );
    expect(upsert).toEqual({ n: 15n });
    const cas = await sql.get("UPDATE items SET n = ? WHERE id = ? AND n = ? RETURNING *", [0n, 2n, 999n]);
    expect(cas).toBeNull();
  });

  test("tx commits when the body resolves and returns its value", async () => {
    const result = await sql.tx(async (tx) => {
      await tx.run("INSERT INTO items (id, n) VALUES (1, 1)");
      await tx.run("UPDATE items SET n = 2 WHERE id = 1");
      return (await tx.get<{ n: bigint }>("SELECT n FROM items WHERE id = 1"))!.n;
    });
    expect(result).toBe(2n);
    expect(await sql.get("SELECT n FROM items WHERE id = 1")).toEqual({ n: 2n });
  });

  test("tx rolls back when the body throws, and rethrows the same error", async () => {
    const boom = new Error("boom");
    const err = await sql
      .tx(async (tx) => {
        await tx.run("INSERT INTO items (id, n) VALUES (1, 1)");
        throw boom;
      })
      .catch((e) => e);
    expect(err).toBe(boom);
    expect(await sql.all("SELECT id FROM items")).toEqual([]);
  });

  test("nested tx is a savepoint: an inner failure undoes only the inner writes", async () => {
    await sql.tx(async (tx) => {
      await tx.run("INSERT INTO items (id) VALUES (1)");
      const inner = await tx
        .tx(async (sp) => {
          await sp.run("INSERT INTO items (id) VALUES (2)");
          throw new Error("inner");
        })
        .catch((e: Error) => e.message);
      expect(inner).toBe("inner");
      await tx.tx(async (sp) => {
        await sp.run("INSERT INTO items (id) VALUES (3)");
        await sp.tx(async (sp2) => {
          await sp2.run("INSERT INTO items (id) VALUES (4)");
        });
      });
    });
    expect(await sql.all("SELECT id FROM items ORDER BY id")).toEqual([{ id: 1n }, { id: 3n }, { id: 4n }]);

    // An outer failure undoes released savepoints too.
    await sql
      .tx(async (tx) => {
        await tx.tx(async (sp) => {
          await sp.run("INSERT INTO items (id) VALUES (5)");
        });
        throw new Error("outer");
      })
      .catch(() => {});
    expect(await sql.get("SELECT id FROM items WHERE id = 5")).toBeNull();
  });

  test("a constraint error caught inside a savepoint leaves the transaction usable", async () => {
    await sql.run("INSERT INTO items (id, uniq) VALUES (1, 'taken')");
    const outcome = await sql.tx(async (tx) => {
      const dup = await tx
        .tx((sp) => sp.run("INSERT INTO items (id, uniq) VALUES (2, 'taken')"))
        .catch((e) => e);
      expect(dup).toBeInstanceOf(SqlConstraintError);
      await tx.run("INSERT INTO items (id, uniq) VALUES (3, 'free')");
      return "committed";
    });
    expect(outcome).toBe("committed");
    expect(await sql.all("SELECT id FROM items ORDER BY id")).toEqual([{ id: 1n }, { id: 3n }]);
  });

  test("a tx handle used after its transaction ended rejects", async () => {
    let kept: Sql | null = null;
    await sql.tx(async (tx) => {
      kept = tx;
    });
    await expect(kept!.get("SELECT 1 AS x")).rejects.toBeInstanceOf(SqlTxEndedError);
    await expect(kept!.run("INSERT INTO items (id) VALUES (1)")).rejects.toBeInstanceOf(SqlTxEndedError);
    expect(await sql.all("SELECT id FROM items")).toEqual([]);
  });

  test("the root Sql used inside its own transaction is refused at once, not a self-wait", async () => {
    const errors = await sql.tx(async (tx) => {
      await tx.run("INSERT INTO items (id) VALUES (1)");
      const got: unknown[] = [];
      got.push(await sql.get("SELECT id FROM items").catch((e) => e));
      got.push(await sql.run("DELETE FROM items").catch((e) => e));
      got.push(await sql.tx(async () => "nested on the root").catch((e) => e));
      await tx.tx(async () => {
        got.push(await sql.all("SELECT id FROM items").catch((e) => e));
      });
      return got;
    });
    expect(errors.map((e) => e instanceof SqlNestingError)).toEqual([true, true, true, true]);
    // The transaction itself was not harmed, and the root works again afterwards.
    expect(await sql.all("SELECT id FROM items")).toEqual([{ id: 1n }]);
  });

  test("constraint violations are SqlConstraintError with the same kind in both dialects", async () => {
    await sql.run("INSERT INTO items (id, uniq) VALUES (1, 'u')");
    const cases: [string, string][] = [
      ["INSERT INTO items (id) VALUES (1)", "unique"],
      ["INSERT INTO items (id, uniq) VALUES (2, 'u')", "unique"],
      ["INSERT INTO wallet (id, balance) VALUES (1, -5)", "check"],
      ["INSERT INTO items (id, parent) VALUES (3, 404)", "foreign_key"],
      ["INSERT INTO wallet (id, balance) VALUES (2, NULL)", "not_null"],
    ];
    for (const [statement, kind] of cases) {
      const err = await sql.run(statement).catch((e) => e);
      expect(err).toBeInstanceOf(SqlConstraintError);
      expect((err as SqlConstraintError).kind as string).toBe(kind);
      expect((err as Error).cause).toBeDefined();
    }
    // The same inside a transaction, which then rolls back whole.
    const err = await sql
      .tx(async (tx) => {
        await tx.run("INSERT INTO wallet (id, balance) VALUES (3, 1)");
        await tx.run("UPDATE wallet SET balance = balance - 2 WHERE id = 3");
      })
      .catch((e) => e);
    expect((err as SqlConstraintError).kind).toBe("check");
    expect(await sql.get("SELECT id FROM wallet WHERE id = 3")).toBeNull();
  });

  test("a failing statement rejects; it never throws synchronously", async () => {
    let p: Promise<unknown> | null = null;
    expect(() => {
      p = sql.get("SELECT * FROM no_such_table");
    }).not.toThrow();
    await expect(p!).rejects.toBeDefined();
  });

  test("two transactions racing a conditional UPDATE: exactly one wins", async () => {
    await sql.run("INSERT INTO wallet (id, balance) VALUES (1, 100)");
    const spend = () =>
      sql.tx(async (tx) => {
        const r = await tx.run("UPDATE wallet SET balance = balance - 70 WHERE id = 1 AND balance >= 70");
        await sleep(30); // hold the row (PostgreSQL) / the writer lock (SQLite) a while
        return r.changes;
      });
    const results = await Promise.all([spend(), spend()]);
    expect(results.sort()).toEqual([0, 1]);
    expect(await sql.get("SELECT balance FROM wallet WHERE id = 1")).toEqual({ balance: 30n });
  });

  /**
   * Opens a transaction that inserts a row, then lets the test's own flow (another caller, as a
   * concurrent request would be: not the transaction's body) issue a read while it is still open.
   */
  async function readDuringTransaction(outcome: "commit" | "rollback") {
    const order: string[] = [];
    let opened!: () => void;
    const isOpen = new Promise<void>((r) => {
      opened = r;
    });
    const txDone = sql
      .tx(async (tx) => {
        await tx.run("INSERT INTO items (id) VALUES (1)");
        opened();
        await sleep(30);
        order.push("end");
        if (outcome === "rollback") throw new Error("roll back");
      })
      .catch(() => {});
    await isOpen;
    const seen = await sql.all("SELECT id FROM items");
    order.push("outside read");
    await txDone;
    return { order, seen };
  }

  test("a statement issued while a transaction is open sees only committed data", async () => {
    const { order, seen } = await readDuringTransaction("commit");
    if (dialect === "sqlite") {
      // One connection: the read waits for the transaction, then sees its committed row.
      expect(order).toEqual(["end", "outside read"]);
      expect(seen).toEqual([{ id: 1n }]);
    } else {
      // Another pooled connection: the read runs at once and does not see the uncommitted row.
      expect(order).toEqual(["outside read", "end"]);
      expect(seen).toEqual([]);
    }
    expect(await sql.all("SELECT id FROM items")).toEqual([{ id: 1n }]);
  });

  test("a statement issued while a transaction is open sees nothing of it when it rolls back", async () => {
    const { seen } = await readDuringTransaction("rollback");
    expect(seen).toEqual([]);
    expect(await sql.all("SELECT id FROM items")).toEqual([]);
  });

  test("concurrent transactions all commit (serialised on SQLite; on PostgreSQL more than the pool holds)", async () => {
    await sql.run("INSERT INTO wallet (id, balance) VALUES (1, 0)");
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sql.tx(async (tx) => {
          await tx.run("UPDATE wallet SET balance = balance + ? WHERE id = 1", [i + 1]);
          await tx.run("INSERT INTO items (id, n) VALUES (?, ?)", [i + 1, i]);
        }),
      ),
    );
    expect(await sql.get("SELECT balance FROM wallet WHERE id = 1")).toEqual({ balance: 465n });
    expect(await sql.get("SELECT count(*) AS c FROM items")).toEqual({ c: 30n });
  });
});
