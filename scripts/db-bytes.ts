// Database bytes per request, by kind and by table (docs/performance.md "Issue 36: bytes per job and
// retention"): starts gengate on a fresh SQLite data dir, sends N requests of each kind through its
// API (a media job through /v1/queue, a chat call, a media job with a webhook), and reads SQLite's
// dbstat (every page of every table and index) after each kind. Then it stops the server and runs
// the request retention over everything (JobRetentionStore, as the hourly sweep would once the
// records are older than [retention] requests_days): what the purge frees and what stays (money);
// then the money history's retention ([retention] ledger_days), and what stays after both.
// Usage: sh scripts/bunw scripts/db-bytes.ts [--n 1000] [--bin dist/gengate] [--batch 500]
// It prints figures and asserts nothing.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { migrate, openDatabase } from "../src/db/database.ts";
import { SqliteSql } from "../src/db/sql-sqlite.ts";
import { LedgerRetentionStore } from "../src/ledger/ledger-retention.ts";
import { UpstreamCallbackStore } from "../src/providers/callback-store.ts";
import { JobLogStore } from "../src/queue/job-log-store.ts";
import { JobRetentionStore, PURGE_BATCH } from "../src/queue/job-retention-store.ts";
import { WebhookOutbox } from "../src/webhooks/outbox.ts";
import { children, spawnAndWait, work } from "./bench-proc.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "1000" },
    bin: { type: "string" },
    batch: { type: "string", default: String(PURGE_BATCH) },
  },
});
const N = Number(values.n);
const BATCH = Number(values.batch);
const cmd = values.bin ? [values.bin] : [process.execPath, "run", join(import.meta.dir, "../src/main.ts")];
const dataDir = join(work, "data");
const dbPath = join(dataDir, "gengate.db");

/** Bytes of pages (on disk) and of row payloads, per table with its indexes. */
type Sizes = Map<string, { pages: number; payload: number }>;

function sizes(): Sizes {
  const db = new Database(dbPath, { readonly: true });
  try {
    const owner = new Map(
      (
        db.query("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").all() as {
          name: string;
          tbl_name: string;
        }[]
      ).map((r) => [r.name, r.tbl_name]),
    );
    const out: Sizes = new Map();
    for (const r of db
      .query("SELECT name, sum(pgsize) AS pages, sum(payload) AS payload FROM dbstat GROUP BY name")
      .all() as {
      name: string;
      pages: number;
      payload: number;
    }[]) {
      const table = owner.get(r.name) ?? r.name;
      const t = out.get(table) ?? { pages: 0, payload: 0 };
      t.pages += Number(r.pages);
      t.payload += Number(r.payload);
      out.set(table, t);
    }
    return out;
  } finally {
    db.close();
  }
}

function count(sqlText: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return Number(Object.values(db.query(sqlText).get() as Record<string, number>)[0]);
  } finally {
    db.close();
  }
}

/** Per-table growth from `a` to `b`, divided by `n`, largest first; bytes of pages and of payload. */
function perRequest(a: Sizes, b: Sizes, n: number) {
  const rows: { table: string; pages: number; payload: number }[] = [];
  for (const [table, s] of b) {
    const before = a.get(table) ?? { pages: 0, payload: 0 };
    const pages = (s.pages - before.pages) / n;
    const payload = (s.payload - before.payload) / n;
    if (pages !== 0 || payload !== 0) rows.push({ table, pages, payload });
  }
  rows.sort((x, y) => y.pages - x.pages);
  const total = rows.reduce((t, r) => ({ pages: t.pages + r.pages, payload: t.payload + r.payload }), {
    pages: 0,
    payload: 0,
  });
  return { rows, total };
}

function print(title: string, r: ReturnType<typeof perRequest>) {
  console.log(
    `\n${title}: ${Math.round(r.total.pages)} bytes of pages per request (${Math.round(r.total.payload)} of payload)`,
  );
  console.log("| table (with its indexes) | page bytes | payload bytes |\n|---|---:|---:|");
  for (const x of r.rows) console.log(`| ${x.table} | ${Math.round(x.pages)} | ${Math.round(x.payload)} |`);
}

/** `total` calls of `send`, `concurrency` at a time. */
async function many(total: number, concurrency: number, send: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await send(next++);
    }),
  );
}

async function until(check: () => boolean) {
  for (let i = 0; i < 6000 && !check(); i++) await Bun.sleep(50);
}

const hits = { n: 0 };
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (req) => {
    await req.text();
    hits.n++;
    return new Response("");
  },
});

const configPath = join(work, "gengate.toml");
await Bun.write(
  configPath,
  '[limits]\nwrites_per_minute = 1000000\nin_flight = 100000\n[webhooks]\nallow_private_cidrs = ["127.0.0.0/8"]\n',
);
const { proc, match } = await spawnAndWait(
  [...cmd, "serve", "--port", "0", "--data-dir", dataDir, "--config", configPath],
  /Default API key[^:]*:\s+(gk_\w+)[\s\S]*?"url":"([^"]+)"/,
);
const [key, url] = [match[1]!, match[2]!];
const accounts = Bun.spawnSync([...cmd, "account", "list", "--json", "--data-dir", dataDir]);
const accountId = (JSON.parse(accounts.stdout.toString()) as { data: { id: string }[] }).data[0]!.id;
Bun.spawnSync([...cmd, "account", "credit", accountId, "1000000", "--data-dir", dataDir]);
const headers = { authorization: `Key ${key}`, "content-type": "application/json" };
const prompt = "a watercolor fox in a snowy birch forest at dawn, soft light, wide angle";

async function post(path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

const finished = () => count("SELECT count(*) FROM jobs WHERE completed_at IS NOT NULL");
const phases: { title: string; run: () => Promise<void> }[] = [
  {
    title: "media job (POST /v1/queue/sandbox/image)",
    run: async () => {
      const done = finished();
      await many(N, 16, () => post("/v1/queue/sandbox/image", { prompt }));
      await until(() => finished() >= done + N);
    },
  },
  {
    title: "chat call (POST /v1/chat/completions, sandbox/chat)",
    run: async () => {
      await many(N, 16, () =>
        post("/v1/chat/completions", {
          model: "sandbox/chat",
          messages: [
            { role: "system", content: "You are a helpful assistant. Answer briefly." },
            { role: "user", content: "Name three rivers of Europe and the seas they flow into." },
          ],
          max_tokens: 64,
        }),
      );
    },
  },
  {
    title: "media job with a webhook (delivered)",
    run: async () => {
      const done = finished();
      const hook = `http://127.0.0.1:${receiver.port}/hook`;
      await many(N, 16, () => post("/v1/queue/sandbox/image", { prompt, webhook_url: hook }));
      await until(() => finished() >= done + N && hits.n >= N);
      await until(() => count("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'") === 0);
    },
  },
  {
    // Not a request: an upload's row (kept after its expiry, marked deleted: see the report).
    title: "upload (POST /v1/files, a 1x1 PNG)",
    run: async () => {
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "base64",
      );
      await many(N, 16, async () => {
        const res = await fetch(`${url}/v1/files`, {
          method: "POST",
          headers: { authorization: `Key ${key}`, "content-type": "image/png" },
          body: png,
        });
        if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      });
    },
  },
];

console.log(
  `gengate database bytes per request, ${N} requests of each kind (SQLite dbstat, 4096-byte pages)`,
);
let last = sizes();
const start = last;
for (const p of phases) {
  await p.run();
  const now = sizes();
  print(p.title, perRequest(last, now, N));
  last = now;
}
proc.kill("SIGTERM");
await proc.exited;
children.length = 0;
receiver.stop(true);

// The purge, as the sweep runs it, over every record (all older than a cutoff of now + 1 s).
const db = openDatabase(dbPath);
migrate(db);
const sql = new SqliteSql(db);
const retention = new JobRetentionStore(sql, {
  logs: new JobLogStore(sql),
  outbox: new WebhookOutbox(sql),
  callbacks: new UpstreamCallbackStore(sql),
});
const batches: number[] = [];
let purged = 0;
for (;;) {
  const t0 = performance.now();
  const n = await retention.purgeBatch(Date.now() + 1000, BATCH);
  batches.push(performance.now() - t0);
  purged += n;
  if (n < BATCH) break;
}
db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
const afterRequests = sizes();
// Then the money history's retention ([retention] ledger_days, off by default), as its sweep runs
// it once every entry is older than the cutoff: each account keeps its newest entry.
const t1 = performance.now();
const money = await new LedgerRetentionStore(sql).purge(Math.floor(Date.now() / 1000) + 1, undefined, BATCH);
const moneyMs = performance.now() - t1;
db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
const pageSize = Number((db.query("PRAGMA page_size").get() as { page_size: number }).page_size);
const freelist = Number(
  (db.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count,
);
db.close();
const after = sizes();
const freed = perRequest(afterRequests, last, 3 * N);
print(`purged (${purged} requests): bytes freed per request, averaged over the three kinds`, freed);
print(
  "what stays per request after it: the money rows (forever by default), job_outputs (until their own expiry, [files] retention_hours) and the uploads' rows (marked deleted at their expiry, then kept)",
  perRequest(start, afterRequests, 3 * N),
);
print(
  `then the ledger retention (${money.entries} entries, ${money.holds} holds, ${moneyMs.toFixed(0)} ms): bytes freed per request`,
  perRequest(after, afterRequests, 3 * N),
);
print("what stays per request after both", perRequest(start, after, 3 * N));
batches.sort((a, b) => a - b);
console.log(
  `\npurge: ${batches.length} batches of up to ${BATCH} jobs; per batch median ${batches[Math.floor(batches.length / 2)]!.toFixed(1)} ms, max ${batches.at(-1)!.toFixed(1)} ms`,
);
console.log(
  `pages freed for reuse (freelist): ${freelist} (${Math.round((freelist * pageSize) / 3 / N)} bytes per request)`,
);
