import { LocalBus, PostgresBus } from "../../src/db/bus.ts";
import { openDatabase } from "../../src/db/database.ts";
import { CacheInvalidation } from "../../src/db/invalidation.ts";
import type { Sql } from "../../src/db/sql.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";

// Another process changing a cache scope, for test/db/invalidation.test.ts (like the operator CLI,
// or another instance):
//   bun invalidation-worker.ts <sqlite file | postgres url> <scope> <count>
// Changes <scope> <count> times, 150 ms apart, printing "CHANGED <version> <Date.now()>" after each
// commit; then exits.

const [target, scope, count] = process.argv.slice(2) as [string, string, string];
let sql: Sql;
let close: () => Promise<void>;
let bus: LocalBus | PostgresBus;
if (target.startsWith("postgres")) {
  const pg = PostgresSql.connect({ url: target, password: null });
  bus = new PostgresBus({ settings: { url: target, password: null }, publisher: pg });
  sql = pg;
  close = () => pg.close();
} else {
  const db = openDatabase(target);
  const lite = new SqliteSql(db);
  bus = new LocalBus();
  sql = lite;
  close = async () => {
    lite.close();
    db.close();
  };
}
const invalidation = new CacheInvalidation(sql, bus);
for (let i = 0; i < Number(count); i++) {
  await invalidation.changed(scope);
  console.log(`CHANGED ${invalidation.version(scope)} ${Date.now()}`);
  await Bun.sleep(150);
}
await bus.close();
await close();
