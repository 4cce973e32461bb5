import { Counter, RequestHistogram } from "./registry.ts";

/** Worker slots per provider, read at scrape time from the running pool. */
export type WorkerUsage = () => Iterable<[provider: string, usage: { busy: number; total: number }]>;

/**
 * The in-memory instruments of one server process: what only the process sees as it happens
 * (requests, final job states, charges, webhook attempts). Everything that is state (queue depth,
 * balances, sizes) is read at scrape time instead; see collectors.ts. One instance per server,
 * created with the queue services so every writer can reach it.
 */
export class Metrics {
  readonly requests = new RequestHistogram(
    "gengate_http_request_duration_seconds",
    "HTTP requests by method, route template and status: time from arrival to the response headers.",
  );
  readonly jobsFinished = new Counter<number>(
    "gengate_jobs_finished_total",
    "Jobs (queue, run and chat) that reached a final state, by model and state.",
    ["model", "state"],
    0,
  );
  readonly charged = new Counter<bigint>(
    "gengate_charged_micro_total",
    "Money charged for finished work, in micro-units of the currency (1 USD = 1000000).",
    ["currency", "model"],
    0n,
  );
  readonly webhookAttempts = new Counter<number>(
    "gengate_webhook_attempts_total",
    "Webhook delivery attempts by outcome: delivered, retry (will be retried), failed (given up), lost_lease.",
    ["outcome"],
    0,
  );
  /** Set by the server once the worker pool runs; null in processes without one. */
  workerUsage: WorkerUsage | null = null;
}
