// SQLite: the purge's reads and its batches, and the file staying flat under steady traffic (pages
// freed by a purge are reused by the next jobs' rows, without VACUUM). Counts, never timings.
import type { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { UpstreamCallbackStore } from "../../src/providers/callback-store.ts";
import { JobLogStore } from "../../src/queue/job-log-store.ts";
import { JobRetentionStore, PURGE_BATCH, PURGE_SELECT_SQL } from "../../src/queue/job-retention-store.ts";
import { WebhookOutbox } from "../../src/webhooks/outbox.ts";
import { sqlOf } from "../helpers/sql.ts";

const DAY = 86_400_000;

function database() {
  const db = openDatabase(":memory:");
  migrate(db);
  // The jobs' money rows (holds, ledger entries) are kept forever by design and measured apart
  // (docs/performance.md "Issue 36: bytes per job and retention"); here only what the purge frees.
  db.exec("PRAGMA foreign_keys = OFF");
  db.run(
    "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('acct', 'a', 'USD', 0, 0, 0)",
  );
  const sql = sqlOf(db);
  const retention = new JobRetentionStore(sql, {
    logs: new JobLogStore(sql),
    outbox: new WebhookOutbox(sql),
    callbacks: new UpstreamCallbackStore(sql),
  });
  return { db, retention };
}

let seq = 0;
/**
 * `n` finished media jobs that ended at `endedAt`, shaped as the sandbox's (input, quote and output
 * JSON of their real sizes), each with 3 log lines and a delivered webhook.
 */
function insertJobs(db: Database, n: number, endedAt: number) {
  const job = db.prepare(
    `INSERT INTO jobs (id, seq, account_id, key_id, model_id, kind, source, provider, status, input, quote, hold_id,
       webhook_url, deadline_at, output, actual_units, created_at, started_at, completed_at)
     VALUES (?1, ?2, 'acct', 'key_0123456789abcdef', 'sandbox/image', 'image', 'API', 'sandbox', 'COMPLETED', ?3, ?4,
       'hold_' || ?1, 'https://hooks.example.com/gengate', ?5, ?6, '{"images":1}', ?5, ?5, ?5)`,
  );
  const line = db.prepare("INSERT INTO job_logs (job_id, n, at, level, message) VALUES (?, ?, ?, 'info', ?)");
  const delivery = db.prepare(
    `INSERT INTO webhook_deliveries (id, request_id, account_id, url, event, status, attempts, next_attempt_at, created_at, delivered_at, last_status)
       VALUES (?1, ?2, 'acct', 'https://hooks.example.com/gengate', 'COMPLETED', 'delivered', 1, ?3, ?3, ?3, 200)`,
  );
  const input = JSON.stringify({
    prompt: "a watercolor fox in a snowy birch forest, morning light",
    num_images: 1,
  });
  const quote = JSON.stringify({
    unit: "image",
    units: "1",
    unit_price_usd_micro: "10000",
    amount_usd_micro: "10000",
  });
  const output = JSON.stringify({
    images: [{ index: 0, content_type: "image/png", width: 1024, height: 1024 }],
  });
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const id = Bun.randomUUIDv7("hex", endedAt);
      job.run(id, ++seq, input, quote, endedAt, output);
      for (const [k, m] of ["queued", "running on sandbox", "completed in 1.2 s"].entries())
        line.run(id, k, endedAt, m);
      delivery.run(`msg_${id}_completed`, id, endedAt);
    }
  })();
}

const count = (db: Database, table: string) =>
  Number((db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: bigint }).n);
const pragma = (db: Database, name: string) =>
  Number((db.query(`PRAGMA ${name}`).get() as Record<string, bigint>)[name]);

describe("request retention on SQLite", () => {
  test("a batch reads the jobs_completed index in its order: no scan of the jobs kept, no sort", () => {
    const { db } = database();
    const plan = (
      db.query(`EXPLAIN QUERY PLAN ${PURGE_SELECT_SQL}`).all(0, PURGE_BATCH) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join("; ");
    expect(plan).toMatch(
      /SEARCH jobs USING (COVERING )?INDEX jobs_completed \(completed_at>\? AND completed_at<\?\)/,
    );
    expect(plan).not.toMatch(/SCAN jobs|TEMP B-TREE/);
  });

  test("batches of 500 with a turn for requests in between, the newer jobs kept", async () => {
    const { db, retention } = database();
    insertJobs(db, 1_200, 1_000);
    insertJobs(db, 10, 5 * DAY);
    const jobs = () => count(db, "jobs");
    const order: string[] = [];
    setImmediate(() => order.push(`request served with ${jobs()} jobs left`));
    const purged = await retention.purgeFinished(DAY);
    order.push(`purged ${purged}`);
    expect(order).toEqual(["request served with 710 jobs left", "purged 1200"]);
    expect(jobs()).toBe(10);
    expect(count(db, "job_logs")).toBe(30);
  });

  test("steady traffic: the file stops growing once the purge runs, without VACUUM", async () => {
    const { db, retention } = database();
    const rounds = 8;
    const perRound = 2_000;
    const pages: number[] = [];
    for (let r = 1; r <= rounds; r++) {
      // A day of traffic, then the purge keeps one day: the steady state of requests_days = 1.
      insertJobs(db, perRound, r * DAY);
      await retention.purgeFinished((r - 1) * DAY + 1);
      pages.push(pragma(db, "page_count"));
    }
    expect(count(db, "jobs")).toBe(perRound);
    // The first rounds grow the file to hold two days' records (one kept, one arriving); after
    // that each round's rows fit in the pages the previous purge freed.
    // Measured: 774, 1441, 1447, 1447, 1450, 1450, 1450, 1450 (B-tree splits of random ids add a
    // few pages); without the purge it would be 8 x 774.
    expect(pages.at(-1)! - pages[1]!).toBeLessThanOrEqual(pages[1]! / 100);
  });
});
