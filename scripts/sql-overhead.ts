/**
 * What the Sql port costs over direct bun:sqlite calls (figures in src/db/sql-sqlite.ts's doc
 * comment), and, given a PostgreSQL URL, the same statements through PostgresSql:
 *   sh scripts/bunw scripts/sql-overhead.ts [--file] [--pg postgres://user@host:port/db]
 * --file measures a WAL database file in a temp dir instead of :memory:. Sequential and
 * uncontended: one statement awaited after the other.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/database.ts";
import type { Sql } from "../src/db/sql.ts";
import { PostgresSql } from "../src/db/sql-postgres.ts";
import { SqliteSql } from "../src/db/sql-sqlite.ts";

const args = process.argv.slice(2);
const pgUrl = args.includes("--pg") ? args[args.indexOf("--pg") + 1] : undefined;
const dir = args.includes("--file") ? mkdtempSync(join(tmpdir(), "gengate-sql-overhead-")) : null;
const N = 200_000;
const TX_N = 50_000;

const db = openDatabase(dir ? join(dir, "bench.db") : ":memory:");
db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
db.exec(
  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000) INSERT INTO t SELECT i, 0 FROM s",
);
const sql = new SqliteSql(db);

async function time(label: string, n: number, fn: (i: number) => unknown): Promise<number> {
  // Direct calls are not awaited (a caller of bun:sqlite does not await); the port's calls are.
  for (let i = 0; i < Math.min(n, 5000); i++) {
    const r = fn(i);
    if (r instanceof Promise) await r;
  }
  const t0 = Bun.nanoseconds();
  for (let i = 0; i < n; i++) {
    const r = fn(i);
    if (r instanceof Promise) await r;
  }
  const us = (Bun.nanoseconds() - t0) / 1000 / n;
  console.log(`${label.padEnd(44)} ${us.toFixed(2).padStart(8)} us`);
  return us;
}

const get = db.prepare("SELECT id, n FROM t WHERE id = ?");
const upd = db.prepare("UPDATE t SET n = n + 1 WHERE id = ?");
const key = (i: number) => BigInt((i % 1000) + 1);
console.log(`SQLite ${dir ? "WAL file" : ":memory:"}, sequential, uncontended`);
const g0 = await time("get: direct prepared statement", N, (i) => get.get(key(i)));
const g1 = await time("get: SqliteSql.get (awaited)", N, (i) =>
  sql.get("SELECT id, n FROM t WHERE id = ?", [key(i)]),
);
const r0 = await time("run: direct prepared statement", N, (i) => upd.run(key(i)));
const r1 = await time("run: SqliteSql.run (awaited)", N, (i) =>
  sql.run("UPDATE t SET n = n + 1 WHERE id = ?", [key(i)]),
);
const tx = db.transaction((k: bigint) => upd.run(k));
const t0 = await time("tx of one UPDATE: db.transaction().immediate", TX_N, (i) => tx.immediate(key(i)));
const t1 = await time("tx of one UPDATE: SqliteSql.tx", TX_N, (i) =>
  sql.tx((t) => t.run("UPDATE t SET n = n + 1 WHERE id = ?", [key(i)])),
);
console.log(
  `overhead per statement: get +${(g1 - g0).toFixed(2)} us, run +${(r1 - r0).toFixed(2)} us, tx +${(t1 - t0).toFixed(2)} us`,
);
sql.close();
db.close();
if (dir) rmSync(dir, { recursive: true, force: true });

if (pgUrl) {
  const pg: Sql & { close(): Promise<void> } = PostgresSql.connect({ url: pgUrl, password: null });
  console.log("PostgreSQL (one statement in flight at a time; the pool's first connection)");
  await pg.run("DROP TABLE IF EXISTS gengate_sql_overhead");
  await pg.run("CREATE TABLE gengate_sql_overhead (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)");
  await pg.run("INSERT INTO gengate_sql_overhead SELECT g, 0 FROM generate_series(1, 1000) g");
  await time("get: PostgresSql.get", 20_000, (i) =>
    pg.get("SELECT id, n FROM gengate_sql_overhead WHERE id = ?", [key(i)]),
  );
  await time("run: PostgresSql.run", 20_000, (i) =>
    pg.run("UPDATE gengate_sql_overhead SET n = n + 1 WHERE id = ?", [key(i)]),
  );
  await time("tx of one UPDATE: PostgresSql.tx", 5_000, (i) =>
    pg.tx((t) => t.run("UPDATE gengate_sql_overhead SET n = n + 1 WHERE id = ?", [key(i)])),
  );
  await pg.run("DROP TABLE gengate_sql_overhead");
  await pg.close();
}
