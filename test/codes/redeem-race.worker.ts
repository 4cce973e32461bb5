// One contender of test/codes/security.test.ts's race: opens the database file on its own
// connection (as a second server process or an operator command would), waits for the common start
// instant, redeems the code into its account and prints the outcome as one JSON line.

import { createServices } from "../../src/app/services.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { sqlOf } from "../helpers/sql.ts";

const [path, accountId, code, startAt] = process.argv.slice(2) as [string, string, string, string];
const db = openDatabase(path, { create: false });
migrate(db);
const s = createServices(sqlOf(db), "http://gengate.test");
while (Date.now() < Number(startAt)) await Bun.sleep(1);
try {
  const r = await s.codes.redeem(accountId, code, "key_race");
  console.log(JSON.stringify({ ok: true, codeId: r.codeId }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, code: err instanceof DomainError ? err.code : String(err) }));
}
db.close();
