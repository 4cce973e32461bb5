/**
 * Figures for docs/performance.md, "Issue 36: streaming exports and keyset paging": the wallet's CSV
 * of an account with a long history, streamed (walletCsv) against the former one-string export,
 * each in its own process on the same database so their peak RSS is their own.
 *
 *   bun scripts/csv-export-figures.ts seed DIR [REQUESTS]   # writes REQUESTS jobs (default 100,000)
 *   bun scripts/csv-export-figures.ts stream DIR            # first byte, total, peak RSS, worst loop lag
 *   bun scripts/csv-export-figures.ts former DIR
 *
 * The jobs are written through the stores as scripts/bench.ts's console phase writes them (a hold,
 * the job, its completion: 2 or 3 ledger entries each), over 90 days, 6 keys and 3 models.
 */
import { join } from "node:path";
import { createServices } from "../src/app/services.ts";
import { migrate, openDatabase } from "../src/db/database.ts";
import { SqliteSql } from "../src/db/sql-sqlite.ts";
import { JobOutputStore } from "../src/files/job-output-store.ts";
import { type FigureStores, walletCsv } from "../src/ledger/figures.ts";
import { JobEvents } from "../src/queue/events.ts";
import { JobStore } from "../src/queue/job-store.ts";
import { formerWalletCsv } from "../test/helpers/csv.ts";

const [mode, dir, count] = process.argv.slice(2);
if (!dir || !["seed", "stream", "former"].includes(mode ?? "")) {
  console.error("usage: csv-export-figures.ts seed|stream|former DIR [REQUESTS]");
  process.exit(2);
}
const db = openDatabase(join(dir, "gengate.db"));
migrate(db);
let clock = Math.floor(Date.now() / 1000);
const sql = new SqliteSql(db);
const s = createServices(sql, "http://127.0.0.1:1", () => clock);
const jobs = new JobStore(sql, {
  ledger: s.ledger,
  outputs: new JobOutputStore(sql),
  events: new JobEvents(),
});

/** Peak resident memory of this process so far (VmHWM), MiB. */
const peakMiB = async () =>
  Number(/VmHWM:\s+(\d+)/.exec(await Bun.file("/proc/self/status").text())![1]) / 1024;

if (mode === "seed") {
  const n = Number(count ?? 100_000);
  const { account } = await s.accounts.createAccount("csv figures", "USD");
  const keys: string[] = [];
  for (let k = 0; k < 6; k++)
    keys.push((await s.accounts.createKey(account.id, { name: `key ${k}`, monthlyLimitMicro: null })).keyId);
  const models = ["sandbox/image", "sandbox/speech", "sandbox/video"];
  const now = clock;
  clock = now - 91 * 86_400;
  await s.ledger.topUp(account.id, 10n ** 15n, "figures");
  const t0 = performance.now();
  await sql.tx(async (tx) => {
    const ledger = s.ledger.in(tx);
    const txJobs = jobs.in(tx);
    for (let i = 0; i < n; i++) {
      clock = now - Math.floor(((n - i) * 90 * 86_400) / n);
      const id = Bun.randomUUIDv7();
      const keyId = keys[i % keys.length]!;
      const modelId = models[i % models.length]!;
      const quote = BigInt(1_000 + (i % 97) * 10);
      const hold = await ledger.reserve({
        accountId: account.id,
        keyId,
        modelId,
        requestId: id,
        source: "API",
        quotedUsdMicro: quote,
      });
      await txJobs.insert({
        id,
        accountId: account.id,
        keyId,
        modelId,
        kind: "image",
        source: "API",
        provider: "sandbox",
        input: "{}",
        quote: "{}",
        holdId: hold.id,
        webhookUrl: null,
        deadlineAt: clock * 1000 + 60_000,
        createdAt: clock * 1000,
        runningUntil: clock * 1000 + 60_000,
      });
      await txJobs.complete(id, {}, [], quote - BigInt(i % 3), null, 3_600_000, clock * 1000);
    }
  });
  const entries = db.query("SELECT count(*) AS n FROM ledger_entries").get() as { n: number };
  console.log(
    `seeded ${n} requests, ${entries.n} ledger entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
} else {
  const account = (await s.accounts.listAccounts(1, null))[0]!;
  const stores = { ...s, jobs } as unknown as FigureStores;
  // The event loop's worst stall while the export runs: the longest gap between 1 ms ticks.
  let last = performance.now();
  let worstLag = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    worstLag = Math.max(worstLag, t - last);
    last = t;
  }, 1);
  const before = await peakMiB();
  const t0 = performance.now();
  let firstByte = 0;
  let bytes = 0;
  if (mode === "stream") {
    const reader = (await walletCsv(stores, account.id)).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!firstByte) firstByte = performance.now() - t0;
      bytes += value.byteLength;
    }
  } else {
    // The former export (before issue 36): every page read, then the whole file as one string.
    const text = await formerWalletCsv(s.wallet, account.id, account.currency);
    const body = new TextEncoder().encode(text);
    firstByte = performance.now() - t0;
    bytes = body.byteLength;
  }
  const total = performance.now() - t0;
  await Bun.sleep(5);
  clearInterval(tick);
  console.log(
    `${mode}: ${(bytes / 1e6).toFixed(1)} MB, first byte ${firstByte.toFixed(1)} ms, total ${total.toFixed(0)} ms, peak RSS ${before.toFixed(0)} -> ${(await peakMiB()).toFixed(0)} MiB, worst event-loop stall ${worstLag.toFixed(1)} ms`,
  );
}
sql.close();
db.close();
