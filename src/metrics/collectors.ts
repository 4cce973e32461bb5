import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Sql } from "../db/sql.ts";
import { freeBytes } from "../files/upload-stream.ts";
import type { CircuitBreaker } from "../providers/circuit.ts";
import { ExpositionWriter } from "./exposition.ts";
import type { Metrics } from "./metrics.ts";

/** What a scrape reads: the server's context, narrowed to the parts metrics need. */
export interface ScrapeSources {
  sql: Sql;
  /** The SQLite file under `sql` (its size is a gauge); null on PostgreSQL. */
  sqlite: Database | null;
  metrics: Metrics;
  providers: Map<string, unknown>;
  circuits: Map<string, CircuitBreaker>;
  files: { root: string; usageBytes(): Promise<{ files: number; outputs: number }> };
  version: string;
  /** Epoch ms. */
  startedAt: number;
}

const CURRENCIES = ["USD", "RUB"] as const;
const CIRCUIT_STATES = ["closed", "open", "half_open"] as const;

/**
 * The SQL of a scrape. Each reads an index or a small table, never the jobs or ledger history:
 * - queued: the covering partial index jobs_queued, O(queued jobs);
 * - running: the partial index jobs_running, O(running jobs), i.e. about the worker count;
 * - money: one pass over accounts, O(accounts) (a few ms per 10,000 accounts);
 * - pending webhooks: the covering partial index webhook_deliveries_due, O(pending deliveries);
 * - storage: the two-row storage_usage table kept by triggers.
 */
export const SCRAPE_SQL = {
  queued:
    "SELECT provider, model_id, count(*) AS n FROM jobs WHERE status = 'IN_QUEUE' GROUP BY provider, model_id",
  running:
    "SELECT provider, model_id, count(*) AS n FROM jobs WHERE status = 'IN_PROGRESS' GROUP BY provider, model_id",
  money:
    "SELECT currency, count(*) AS n, sum(balance_micro) AS balance, sum(held_micro) AS held FROM accounts GROUP BY currency",
  pendingWebhooks: "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'",
  /** PostgreSQL only: the database's size on disk (its WAL is the server's, not the database's). */
  databaseSize: "SELECT pg_database_size(current_database()) AS n",
} as const;

type Lane = { provider: string; model_id: string; n: bigint };
type Money = { currency: string; n: bigint; balance: bigint | null; held: bigint | null };

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL file yet (or an in-memory database)
  }
}

/** One scrape: the in-memory counters, then the gauges read now. */
export async function renderMetrics(src: ScrapeSources): Promise<string> {
  const started = performance.now();
  const out = new ExpositionWriter();
  const m = src.metrics;

  out.family("gengate_build_info", "gauge", "Always 1; the version of the running binary.");
  out.sample({ version: src.version }, 1);
  out.family("process_start_time_seconds", "gauge", "Start time of the process (Unix seconds).");
  out.sample(undefined, Math.floor(src.startedAt / 1000));
  out.family("process_resident_memory_bytes", "gauge", "Resident memory of the process.");
  out.sample(undefined, process.memoryUsage.rss());

  m.requests.write(out);
  m.jobsFinished.write(out);
  m.charged.write(out);
  m.routeSettled.write(out);
  m.routeRevenue.write(out);
  m.routeCost.write(out);
  m.routeCostUnknown.write(out);
  m.webhookAttempts.write(out);
  m.eventLoopLag.write(out);

  // Jobs not yet final, and the queue.
  const queued = await src.sql.all<Lane>(SCRAPE_SQL.queued);
  const running = await src.sql.all<Lane>(SCRAPE_SQL.running);
  out.family("gengate_jobs", "gauge", "Jobs not yet final, by model and state (IN_QUEUE, IN_PROGRESS).");
  for (const r of queued) out.sample({ model: r.model_id, state: "IN_QUEUE" }, r.n);
  for (const r of running) out.sample({ model: r.model_id, state: "IN_PROGRESS" }, r.n);
  const depth = new Map<string, bigint>();
  for (const name of src.providers.keys()) depth.set(name, 0n);
  for (const r of queued) depth.set(r.provider, (depth.get(r.provider) ?? 0n) + r.n);
  out.family("gengate_queue_depth", "gauge", "Jobs waiting in the queue (IN_QUEUE), by provider.");
  for (const [provider, n] of depth) out.sample({ provider }, n);

  // Workers.
  out.family("gengate_workers", "gauge", "Worker slots of the queue, by provider.");
  const usage = m.workerUsage ? [...m.workerUsage()] : [];
  for (const [provider, u] of usage) out.sample({ provider }, u.total);
  out.family("gengate_workers_busy", "gauge", "Worker slots running a job now, by provider.");
  for (const [provider, u] of usage) out.sample({ provider }, u.busy);

  // Provider health.
  out.family(
    "gengate_provider_circuit_state",
    "gauge",
    "1 for the current circuit state of each provider (closed = healthy; open = submits get 503).",
  );
  const circuits = [...src.providers.keys()].map((p) => [p, src.circuits.get(p)?.view()] as const);
  for (const [provider, view] of circuits)
    for (const state of CIRCUIT_STATES)
      out.sample({ provider, state }, (view?.state ?? "closed") === state ? 1 : 0);
  out.family(
    "gengate_provider_consecutive_failures",
    "gauge",
    "Upstream failures in a row, by provider (the circuit opens at 5).",
  );
  for (const [provider, view] of circuits) out.sample({ provider }, view?.consecutive_failures ?? 0);
  // The recent calls on this instance (the last 15 minutes, at most 1000 calls: CallStats).
  const recent = [...src.providers.keys()].map((p) => [p, src.circuits.get(p)?.stats.view()] as const);
  out.family(
    "gengate_provider_recent_calls",
    "gauge",
    "Upstream calls that ended in the last 15 minutes on this instance, by provider (at most 1000).",
  );
  for (const [provider, v] of recent) out.sample({ provider }, v?.recent_calls ?? 0);
  out.family(
    "gengate_provider_error_ratio",
    "gauge",
    "Share of those calls that failed upstream (0 to 1), by provider; absent without calls.",
  );
  for (const [provider, v] of recent) if (v?.error_rate != null) out.sample({ provider }, v.error_rate);
  out.family(
    "gengate_provider_latency_p50_seconds",
    "gauge",
    "Median duration of those calls (a media job's run; chat: to the first piece), by provider; absent without calls.",
  );
  for (const [provider, v] of recent)
    if (v?.latency_p50_ms != null) out.sample({ provider }, v.latency_p50_ms / 1000);

  // Money, in micro-units of each currency.
  const money = new Map<string, Money>(
    CURRENCIES.map((c) => [c, { currency: c, n: 0n, balance: 0n, held: 0n }]),
  );
  for (const r of await src.sql.all<Money>(SCRAPE_SQL.money)) money.set(r.currency, r);
  out.family("gengate_accounts", "gauge", "Accounts, by currency.");
  for (const r of money.values()) out.sample({ currency: r.currency }, r.n);
  out.family(
    "gengate_balance_micro",
    "gauge",
    "Sum of account balances (held money included), in micro-units of the currency.",
  );
  for (const r of money.values()) out.sample({ currency: r.currency }, r.balance ?? 0n);
  out.family(
    "gengate_held_micro",
    "gauge",
    "Money reserved by open jobs and chat calls, in micro-units of the currency.",
  );
  for (const r of money.values()) out.sample({ currency: r.currency }, r.held ?? 0n);

  // Webhooks owed.
  out.family(
    "gengate_webhook_deliveries_pending",
    "gauge",
    "Webhook deliveries not yet delivered or given up (due now, in flight or waiting for a retry).",
  );
  out.sample(undefined, (await src.sql.get<{ n: bigint }>(SCRAPE_SQL.pendingWebhooks))!.n);

  // Disk.
  const dbPath = src.sqlite?.filename ?? "";
  const onDisk = dbPath !== "" && dbPath !== ":memory:";
  out.family(
    "gengate_database_bytes",
    "gauge",
    "Size of the database: the SQLite files (main and WAL); on PostgreSQL pg_database_size as main, WAL 0.",
  );
  if (src.sql.dialect === "postgres") {
    out.sample({ file: "main" }, (await src.sql.get<{ n: bigint }>(SCRAPE_SQL.databaseSize))!.n);
    out.sample({ file: "wal" }, 0);
  } else {
    out.sample({ file: "main" }, onDisk ? fileSize(dbPath) : 0);
    out.sample({ file: "wal" }, onDisk ? fileSize(`${dbPath}-wal`) : 0);
  }
  const used = await src.files.usageBytes();
  out.family("gengate_storage_bytes", "gauge", "Bytes in the file store: uploads and job outputs.");
  out.sample({ kind: "uploads" }, used.files);
  out.sample({ kind: "outputs" }, used.outputs);
  out.family("gengate_storage_free_bytes", "gauge", "Free space on the file system of the data dir.");
  out.sample(undefined, freeBytes(src.files.root));

  out.family("gengate_metrics_scrape_duration_seconds", "gauge", "Time this scrape took to compute.");
  out.sample(undefined, (performance.now() - started) / 1000);
  return out.text();
}
