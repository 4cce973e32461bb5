/**
 * A job as stored (the `jobs` table) and as opened, shared by the stores that keep it and the
 * code that renders it; the state machine itself is `JobStore` (job-store.ts).
 */

export type JobStatus = "IN_QUEUE" | "IN_PROGRESS" | "COMPLETED" | "FAILED" | "CANCELLED";
export const FINAL_STATUSES: readonly JobStatus[] = ["COMPLETED", "FAILED", "CANCELLED"];

export interface JobRow {
  id: string;
  seq: bigint;
  account_id: string;
  key_id: string | null;
  /** The signed-in person who opened a studio job (null for API jobs). */
  person_id: string | null;
  model_id: string;
  kind: string;
  source: "API" | "STUDIO";
  /** The provider of the route the job runs or ran on (operator-only). */
  provider: string;
  /** The index of that route in its model's routes (migration 025). */
  route: bigint;
  /** Routes in a row that refused the job before one accepted it (the worker's fallback). */
  route_tries: bigint;
  status: JobStatus;
  input: string;
  quote: string;
  hold_id: string;
  webhook_url: string | null;
  /** What its webhook carries: the request record, or Replicate's prediction (migration 019). */
  webhook_body: WebhookBody;
  upstream_id: string | null;
  attempt: bigint;
  lease_owner: string | null;
  lease_until: bigint | null;
  not_before: bigint;
  deadline_at: bigint;
  output: string | null;
  actual_units: string | null;
  /** What the job cost upstream, micro-USD (migration 024): set at settlement; null = unknown. */
  cost_usd_micro: bigint | null;
  error_code: string | null;
  error_message: string | null;
  created_at: bigint;
  started_at: bigint | null;
  completed_at: bigint | null;
}

/** A webhook's body: gengate's request record, or Replicate's prediction object. */
export type WebhookBody = "record" | "prediction";

export interface NewJob {
  id: string;
  accountId: string;
  keyId: string | null;
  /** A studio job's person: counted in people.open_jobs while the job is open. */
  personId?: string | null;
  modelId: string;
  kind: string;
  source: "API" | "STUDIO";
  provider: string;
  /** The index of the job's route in its model's routes (0 when omitted). */
  route?: number;
  input: string;
  quote: string;
  holdId: string;
  webhookUrl: string | null;
  /** What the webhook carries; "record" unless a door says otherwise. */
  webhookBody?: WebhookBody;
  deadlineAt: number;
  createdAt: number;
  /**
   * Work the request itself performs (chat calls): the job starts IN_PROGRESS, owned by the
   * request, with its lease running to this time (its deadline), and no worker ever claims it.
   */
  runningUntil?: number;
  /**
   * The opener took its in-flight slot itself (JobStore.takeSlot, sent beside the ledger's locks:
   * src/jobs/open.ts); otherwise the insert counts the job in its key's (or person's) open jobs.
   */
  slotTaken?: boolean;
}

/** A worker's lease on a claimed job: its later writes change nothing once another attempt holds it. */
export interface LeaseFence {
  owner: string;
  attempt: bigint;
}

/**
 * The row `JobStore.insert` wrote, without reading it back: queued, or (with `runningUntil`) running
 * in its request under `requestOwner`.
 */
export function openedJobRow(j: NewJob, seq: bigint, requestOwner: string | null): JobRow {
  const running = j.runningUntil !== undefined;
  return {
    id: j.id,
    seq,
    account_id: j.accountId,
    key_id: j.keyId,
    person_id: j.personId ?? null,
    model_id: j.modelId,
    kind: j.kind,
    source: j.source,
    provider: j.provider,
    route: BigInt(j.route ?? 0),
    route_tries: 0n,
    status: running ? "IN_PROGRESS" : "IN_QUEUE",
    input: j.input,
    quote: j.quote,
    hold_id: j.holdId,
    webhook_url: j.webhookUrl,
    webhook_body: j.webhookBody ?? "record",
    upstream_id: null,
    attempt: running ? 1n : 0n,
    lease_owner: running ? requestOwner : null,
    lease_until: running ? BigInt(j.runningUntil!) : null,
    not_before: 0n,
    deadline_at: BigInt(j.deadlineAt),
    output: null,
    actual_units: null,
    cost_usd_micro: null,
    error_code: null,
    error_message: null,
    created_at: BigInt(j.createdAt),
    started_at: running ? BigInt(j.createdAt) : null,
    completed_at: null,
  };
}
