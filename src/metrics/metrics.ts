import { EventLoopLag } from "./event-loop-lag.ts";
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
  // Per route (the provider that ran the job) and model, counted after each completion's commit:
  // what the operator earned and paid (docs/providers.md "Cost and margin").
  readonly routeRevenue = new Counter<bigint>(
    "gengate_route_revenue_usd_micro_total",
    "Charged for completed jobs, USD micro-units, by the provider of the route that ran them and model.",
    ["provider", "model"],
    0n,
  );
  readonly routeCost = new Counter<bigint>(
    "gengate_route_cost_usd_micro_total",
    "Upstream cost of completed jobs whose route has a cost, USD micro-units, by provider and model.",
    ["provider", "model"],
    0n,
  );
  readonly routeSettled = new Counter<number>(
    "gengate_route_jobs_settled_total",
    "Completed (charged) jobs by the provider of the route that ran them and model.",
    ["provider", "model"],
    0,
  );
  readonly routeCostUnknown = new Counter<number>(
    "gengate_route_cost_unknown_jobs_total",
    "Completed jobs whose route has no cost configured (cost unknown, not zero), by provider and model.",
    ["provider", "model"],
    0,
  );

  /** Counts one completed job in the per-route counters (JobStore's onCompleted, after commit). */
  countCompleted(
    job: { provider: string; model_id: string; cost_usd_micro: bigint | number | null },
    revenue: bigint,
  ): void {
    const labels = [job.provider, job.model_id];
    this.routeSettled.inc(labels, 1);
    this.routeRevenue.inc(labels, revenue);
    if (job.cost_usd_micro === null) this.routeCostUnknown.inc(labels, 1);
    else this.routeCost.inc(labels, BigInt(job.cost_usd_micro));
  }

  /** Started by the server (src/app/start.ts); tests start it themselves when they read it. */
  readonly eventLoopLag = new EventLoopLag();

  /** Set by the server once the worker pool runs; null in processes without one. */
  workerUsage: WorkerUsage | null = null;
}
