import { PostgresLeadership } from "../../src/db/leader.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";

// One "instance" for test/db/leader.test.ts, run as its own process:
//   bun leader-worker.ts <database url> <label> <name>
// It campaigns for <name> with the default retry, prints "LEAD <label>" / "LOST <label>" when that
// changes, and every 50 ms runs the leader's work: a 30 ms interval recorded in leader_runs with the
// database's clock, so the test can check that no two workers' runs ever overlapped. SIGTERM: a
// graceful close (leadership given up at once).

const [url, label, name] = process.argv.slice(2) as [string, string, string];
const sql = PostgresSql.connect({ url, password: null });
const leadership = new PostgresLeadership({ settings: { url, password: null }, instance: label });
leadership.onChange((_, leading) => console.log(`${leading ? "LEAD" : "LOST"} ${label}`));

const now = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT) AS us";
let stopping = false;
process.on("SIGTERM", async () => {
  stopping = true;
  await leadership.close();
  await sql.close();
  process.exit(0);
});

console.log(`READY ${label}`);
while (!stopping) {
  await leadership.run(name, async (signal) => {
    const started = (await sql.get<{ us: bigint }>(now))!.us;
    await Bun.sleep(30);
    if (signal.aborted) return;
    await sql.run(`INSERT INTO leader_runs (worker, started_us, ended_us) VALUES (?, ?, (${now}))`, [
      label,
      started,
    ]);
  });
  await Bun.sleep(50);
}
