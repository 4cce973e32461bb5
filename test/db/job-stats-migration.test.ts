// Migration 028 on a database with history, on both dialects: the rollup is backfilled from the
// finished jobs (one count per account, UTC day, key, model, source, status and latency bucket, the
// bucket as latencyBucket computes it at the edges: 0 ms, skewed clocks, powers of two), open jobs
// are left to the live count, and the figures read after it equal a count over the jobs.
import { describe, expect, test } from "bun:test";
import { migrate } from "../../src/db/database.ts";
import { migratePostgres, PG_MIGRATIONS } from "../../src/db/migrate-postgres.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import type { PostgresSql } from "../../src/db/sql-postgres.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";
import { JobStatsStore, latencyBucket } from "../../src/queue/job-stats-store.ts";
import { createTestDatabase, dialects } from "../helpers/postgres.ts";
import { databaseAtVersion } from "../helpers/sql.ts";

const DAY = 86_400_000;
const D0 = Date.UTC(2026, 9, 1); // 2026-10-01
/** Before 028 (main's 027, the usage rollup, is another part's and changes nothing here). */
const BEFORE = 26;

/** A Sql at schema BEFORE, and a function that migrates it to the latest. */
async function atBefore(
  dialect: Dialect,
): Promise<{ sql: Sql; migrate: () => Promise<void>; close: () => Promise<void> }> {
  if (dialect === "sqlite") {
    const db = databaseAtVersion(BEFORE);
    const sql = new SqliteSql(db);
    return { sql, migrate: async () => void migrate(db), close: async () => db.close() };
  }
  const { PostgresSql } = await import("../../src/db/sql-postgres.ts");
  const database = await createTestDatabase();
  const pg = PostgresSql.connect({ url: database.url, password: null });
  await pg.tx(async (tx) => {
    const t = tx as PostgresSql;
    await t.script(
      'CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, applied_at BIGINT NOT NULL)',
    );
    for (const m of PG_MIGRATIONS.filter((m) => m.version <= BEFORE)) {
      await t.script(m.sql);
      await t.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)", [
        m.version,
        m.name,
      ]);
    }
  });
  return {
    sql: pg,
    migrate: async () => void (await migratePostgres(pg)),
    close: async () => {
      await pg.close();
      await database.drop();
    },
  };
}

type Job = {
  account: string;
  key: string | null;
  model: string;
  source: "API" | "STUDIO";
  status: string;
  created: number;
  /** completed_at - created_at; null: open. */
  ms: number | null;
};

// Two accounts, two days (and the first day's last millisecond), keys and none, both sources, every
// status; latencies at the buckets' edges.
const LATENCIES = [0, -5, 1, 2, 3, 7, 8, 999, 1000, 1024, 4095, 4096, 65_536, 125_000, 3_600_000];
const JOBS: Job[] = [
  ...LATENCIES.map((ms, i) => ({
    account: "acct_a",
    key: i % 3 === 0 ? null : "key_a",
    model: i % 2 ? "m/one" : "m/two",
    source: (i % 4 === 0 ? "STUDIO" : "API") as "API" | "STUDIO",
    status: i % 5 === 0 ? "FAILED" : "COMPLETED",
    created: D0 + i * 3_600_000 + (i === 14 ? DAY - 1 - 14 * 3_600_000 : 0),
    ms,
  })),
  {
    account: "acct_a",
    key: "key_a",
    model: "m/one",
    source: "API",
    status: "COMPLETED",
    created: D0 + DAY,
    ms: 1024,
  },
  {
    account: "acct_a",
    key: "key_a",
    model: "m/one",
    source: "API",
    status: "COMPLETED",
    created: D0 + DAY + 9,
    ms: 1024,
  },
  {
    account: "acct_a",
    key: null,
    model: "m/one",
    source: "API",
    status: "CANCELLED",
    created: D0 + DAY,
    ms: 300,
  },
  {
    account: "acct_a",
    key: null,
    model: "m/one",
    source: "API",
    status: "IN_QUEUE",
    created: D0 + DAY,
    ms: null,
  },
  {
    account: "acct_a",
    key: "key_a",
    model: "m/one",
    source: "API",
    status: "IN_PROGRESS",
    created: D0,
    ms: null,
  },
  { account: "acct_b", key: "key_b", model: "m/one", source: "API", status: "FAILED", created: D0, ms: 50 },
];

async function writeHistory(sql: Sql) {
  for (const a of ["acct_a", "acct_b"])
    await sql.run(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES (?, ?, 'USD', 0, 0, 0)",
      [a, a],
    );
  for (const [i, j] of JOBS.entries()) {
    const hold = `hold_${String(i).padStart(20, "0")}`;
    const open = j.ms === null;
    await sql.run(
      `INSERT INTO holds (id, account_id, source, currency, amount_micro, quoted_usd_micro, status, created_at, resolved_at)
         VALUES (?, ?, ?, 'USD', 0, 0, ?, 0, ?)`,
      [hold, j.account, j.source, open ? "open" : "released", open ? null : 1],
    );
    await sql.run(
      `INSERT INTO jobs (id, seq, account_id, key_id, model_id, kind, source, provider, status, input, quote, hold_id,
         deadline_at, created_at, completed_at) VALUES (?, ?, ?, ?, ?, 'image', ?, 'sandbox', ?, '{}', '{}', ?, 0, ?, ?)`,
      [
        `job_${i}`,
        i + 1,
        j.account,
        j.key,
        j.model,
        j.source,
        j.status,
        hold,
        j.created,
        open ? null : j.created + j.ms!,
      ],
    );
  }
}

describe.each(dialects())("028 job stats rollup (%s)", (dialect) => {
  test("backfills one count per account, day, key, model, source, status and bucket; open jobs stay live", async () => {
    const db = await atBefore(dialect);
    try {
      await writeHistory(db.sql);
      await db.migrate();
      const rows = await db.sql.all<Record<string, unknown>>(
        "SELECT account_id, day, key_id, model_id, source, status, n, latency FROM job_stats_daily",
      );
      // Per row: its key, n and its histogram (bucket -> count) in bucket order.
      const got = rows.map((r) => {
        const latency = JSON.parse(r.latency as string);
        const hist = Object.entries(latency as Record<string, number>).sort(
          (a, b) => Number(a[0]) - Number(b[0]),
        );
        return `${[r.account_id, r.day, r.key_id, r.model_id, r.source, r.status, r.n].map(String).join(" ")} ${JSON.stringify(hist)}`;
      });
      const expected = new Map<string, Map<number, number>>();
      for (const j of JOBS.filter((j) => j.ms !== null)) {
        const k = [j.account, Math.floor(j.created / DAY), j.key ?? "", j.model, j.source, j.status].join(
          " ",
        );
        const hist = expected.get(k) ?? new Map<number, number>();
        hist.set(latencyBucket(j.ms!), (hist.get(latencyBucket(j.ms!)) ?? 0) + 1);
        expected.set(k, hist);
      }
      const want = [...expected].map(([k, hist]) => {
        const n = [...hist.values()].reduce((a, b) => a + b, 0);
        const sorted = [...hist].sort((a, b) => a[0] - b[0]).map(([b, c]) => [String(b), c]);
        return `${k} ${n} ${JSON.stringify(sorted)}`;
      });
      expect(got.sort()).toEqual(want.sort());
      // The two 1024 ms jobs of day 2 share a row and a bucket (8 * log2(1024) + 1 = 81).
      expect(got).toContain(`acct_a ${D0 / DAY + 1} key_a m/one API COMPLETED 2 [["81",2]]`);

      // The figures after the migration: the backfilled finals plus the live open jobs.
      const stats = await new JobStatsStore(db.sql).stats({
        accountId: "acct_a",
        fromDay: D0 / DAY,
        untilDay: D0 / DAY + 2,
      });
      const mine = JOBS.filter((j) => j.account === "acct_a");
      expect(stats).toMatchObject({
        total: mine.length,
        completed: mine.filter((j) => j.status === "COMPLETED").length,
        failed: mine.filter((j) => j.status === "FAILED").length,
        cancelled: 1,
        open: 2,
      });
    } finally {
      await db.close();
    }
  });
});
