import { afterEach, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { GroupCommit } from "../../src/db/group-commit.ts";
import { afterCommit } from "../../src/db/sql.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";
import { tempDir } from "../helpers/server.ts";

// Durable commits (docs/decisions.md): every connection opened by openDatabase syncs inside COMMIT
// (FULL); the server's SqliteSql syncs the WAL itself after each write, before the write resolves.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open() {
  const dir = tempDir();
  dirs.push(dir);
  const db = openDatabase(join(dir, "gengate.db"));
  db.exec("CREATE TABLE t (a INTEGER NOT NULL) STRICT");
  return db;
}

const level = (db: ReturnType<typeof open>) =>
  Number((db.query("PRAGMA synchronous").get() as { synchronous: bigint }).synchronous);

test("a connection from openDatabase is WAL with synchronous = FULL", () => {
  const db = open();
  expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
  expect(level(db)).toBe(2); // FULL
  db.close();
});

test("SqliteSql over a WAL file syncs the WAL before each write transaction resolves", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  expect(level(db)).toBe(1); // NORMAL: the sync is done by WalSync instead of inside COMMIT
  const wal = sql.walSync!;
  expect(wal.walPath).toBe(`${db.filename}-wal`);
  for (let i = 1; i <= 5; i++) {
    await sql.tx(async (tx) => {
      await tx.run("INSERT INTO t (a) VALUES (?)", [i]);
    });
    expect(wal.syncs).toBe(i);
  }
  // An UPDATE ... RETURNING read through get() writes too.
  await sql.tx(async (tx) => {
    await tx.get("UPDATE t SET a = a + 1 WHERE a = 1 RETURNING a");
  });
  expect(wal.syncs).toBe(6);
  sql.close();
  db.close();
});

test("a write outside a transaction resolves after a sync; reads never wait for one", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  const wal = sql.walSync!;
  await sql.run("INSERT INTO t (a) VALUES (1)");
  expect(wal.syncs).toBe(1);
  await sql.get("DELETE FROM t WHERE a = 1 RETURNING a");
  expect(wal.syncs).toBe(2);
  await sql.get("SELECT count(*) AS n FROM t");
  await sql.all("  select a from t");
  await sql.get("PRAGMA data_version");
  await sql.tx(async (tx) => {
    await tx.get("SELECT count(*) AS n FROM t");
  });
  expect(wal.syncs).toBe(2);
  sql.close();
  db.close();
});

test("concurrent commits share syncs, and every one resolves after a sync that followed it", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  const wal = sql.walSync!;
  const seen: number[] = [];
  await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      let committedAt = -1;
      await sql.tx(async (tx) => {
        await tx.run("INSERT INTO t (a) VALUES (?)", [i]);
        committedAt = wal.syncs;
      });
      // At least one sync completed after this transaction's commit.
      expect(wal.syncs).toBeGreaterThan(committedAt);
      seen.push(i);
    }),
  );
  expect(seen).toHaveLength(50);
  expect(wal.syncs).toBeGreaterThanOrEqual(1);
  expect(wal.syncs).toBeLessThan(50);
  expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 50n });
  sql.close();
  db.close();
});

test("an in-memory database has no WAL syncer", () => {
  const db = openDatabase(":memory:");
  const sql = new SqliteSql(db);
  expect(sql.walSync).toBeNull();
  sql.close();
  db.close();
});

test("txCommitted resolves at the COMMIT; its durable after the sync, and after-commit hooks only then", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  const wal = sql.walSync!;
  const hooks: number[] = [];
  const committed = await sql.txCommitted(async (tx) => {
    await tx.run("INSERT INTO t (a) VALUES (1)");
    afterCommit(() => hooks.push(wal.syncs));
    return "v";
  });
  expect(committed.value).toBe("v");
  // Committed (another connection sees it) while the sync is still running.
  expect(wal.syncs).toBe(0);
  expect(hooks).toEqual([]);
  const other = openDatabase(db.filename);
  expect(other.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1n });
  other.close();
  await committed.durable;
  expect(wal.syncs).toBe(1);
  expect(hooks).toEqual([1]);
  // A transaction that wrote nothing has nothing to sync.
  const read = await sql.txCommitted(async (tx) => await tx.get("SELECT count(*) AS n FROM t"));
  await read.durable;
  expect(wal.syncs).toBe(1);
  sql.close();
  db.close();
});

test("group commit: runCommitted items resolve at the batch's commit, run items once it is durable", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  const wal = sql.walSync!;
  const group = new GroupCommit(sql);
  const order: string[] = [];
  const early = group
    .runCommitted(async (tx) => {
      await tx.run("INSERT INTO t (a) VALUES (1)");
      return 1;
    })
    .then((c) => {
      order.push(`early:${wal.syncs}`);
      return c;
    });
  const late = group
    .run(async (tx) => {
      await tx.run("INSERT INTO t (a) VALUES (2)");
      return 2;
    })
    .then((v) => {
      order.push(`late:${wal.syncs}`);
      return v;
    });
  const failing = group.runCommitted(async (tx) => {
    await tx.run("INSERT INTO t (a) VALUES (3)");
    throw new Error("refused");
  });
  const c = await early;
  expect(c.value).toBe(1);
  await expect(failing).rejects.toThrow("refused");
  await c.durable;
  expect(await late).toBe(2);
  // One batch, one sync: the early item was answered before it, the other after.
  expect(order).toEqual(["early:0", "late:1"]);
  expect(db.query("SELECT a FROM t ORDER BY a").all()).toEqual([{ a: 1n }, { a: 2n }]);
  sql.close();
  db.close();
});

test("group commit: a failed sync rejects the run items and the early items' durable, never acknowledging", async () => {
  const db = open();
  const sql = new SqliteSql(db);
  const group = new GroupCommit(sql);
  const failure = new Error("EIO: fdatasync failed");
  sql.walSync!.sync = () => Promise.reject(failure);
  const early = group.runCommitted(async (tx) => await tx.run("INSERT INTO t (a) VALUES (1)"));
  const late = group.run(async (tx) => await tx.run("INSERT INTO t (a) VALUES (2)"));
  const c = await early;
  await expect(c.durable).rejects.toBe(failure);
  await expect(late).rejects.toBe(failure);
  await expect(sql.tx(async (tx) => await tx.run("INSERT INTO t (a) VALUES (3)"))).rejects.toBe(failure);
  sql.close();
  db.close();
});
