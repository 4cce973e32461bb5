import type { HoldRow } from "../ledger/ledger.ts";
import type { JobRow } from "./job-row.ts";

/** What a view needs besides the row: live queue position, logs, signed links, webhook state. */
export interface ViewContext {
  baseUrl: string;
  queuePosition: (job: JobRow) => number | null;
  logs: (jobId: string) => Promise<{ at: bigint; level: string; message: string }[]>;
  outputUrls: (job: JobRow) => Promise<string[]>;
  hold: (holdId: string) => Promise<HoldRow | null>;
  webhook: (job: JobRow) => Promise<{ url: string; status: string; attempts: number } | null>;
}

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

function urls(base: string, id: string) {
  return {
    status_url: `${base}/requests/${id}/status`,
    response_url: `${base}/requests/${id}/response`,
    cancel_url: `${base}/requests/${id}/cancel`,
  };
}

/**
 * The same three URLs on the fal alias routes (/v1/queue/{owner}/{alias}/requests/{id}...), for fal
 * clients: like fal's queue, they name only the model's owner and alias (its first two segments).
 */
export function falQueueUrls(base: string, modelId: string, id: string) {
  const app = modelId.split("/").slice(0, 2).join("/");
  const at = `${base}/queue/${app}/requests/${id}`;
  return { status_url: `${at}/status`, response_url: at, cancel_url: `${at}/cancel` };
}

/** The spec's queued request (submit 202, /run 202), plus queue_position and RUB price. */
export async function queuedRequestView(job: JobRow, v: ViewContext) {
  const hold = await v.hold(job.hold_id);
  const quote = JSON.parse(job.quote) as { amount_usd_micro: string };
  return {
    status: job.status,
    request_id: job.id,
    ...urls(v.baseUrl, job.id),
    model_id: job.model_id,
    quoted_usd_micro: quote.amount_usd_micro,
    queue_position: v.queuePosition(job),
    ...(hold && hold.currency === "RUB" ? { price_rub_micro: hold.amount_micro.toString() } : {}),
  };
}

/** The status body (docs/api.md "Requests"). `logs` is always an array; filled only when asked for. */
export async function statusView(job: JobRow, v: ViewContext, withLogs: boolean) {
  return {
    status: job.status,
    request_id: job.id,
    model_id: job.model_id,
    ...urls(v.baseUrl, job.id),
    queue_position: v.queuePosition(job),
    logs: withLogs
      ? (await v.logs(job.id)).map((l) => ({ timestamp: iso(l.at), level: l.level, message: l.message }))
      : [],
    created_at: iso(job.created_at),
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
    error:
      job.status === "FAILED"
        ? { code: job.error_code ?? "generation_failed", message: job.error_message ?? "" }
        : null,
  };
}

/** What a hold charged: the amount once settled, "0" once released, null while it is held. */
function charged(hold: HoldRow | null, amount: bigint | null | undefined): string | null {
  if (hold?.status === "settled") return (amount ?? 0n).toString();
  return hold?.status === "released" ? "0" : null;
}

async function priceView(job: JobRow, v: ViewContext) {
  const quote = JSON.parse(job.quote) as { unit: string; units: string; amount_usd_micro: string };
  const hold = await v.hold(job.hold_id);
  return {
    currency: hold?.currency ?? "USD",
    unit: quote.unit,
    units: quote.units,
    quoted_usd_micro: quote.amount_usd_micro,
    reserved_micro: hold ? hold.amount_micro.toString() : null,
    charged_usd_micro: charged(hold, hold?.charged_usd_micro),
    charged_micro: charged(hold, hold?.charged_micro),
    fx_rate: hold?.fx_rate_micro ? hold.fx_rate_micro.toString() : null,
    actual_units: job.actual_units,
  };
}

/** A list item of GET /requests: the full record without its input. */
export async function listItemView(job: JobRow, v: ViewContext) {
  return {
    ...(await statusView(job, v, false)),
    kind: job.kind,
    source: job.source,
    price: await priceView(job, v),
    output_urls: job.status === "COMPLETED" ? await v.outputUrls(job) : [],
    webhook: await v.webhook(job),
    // Chat calls: the token counts they were billed on.
    ...(job.kind === "text" && job.output
      ? {
          usage:
            (JSON.parse(job.output) as { usage?: { prompt_tokens: number; completion_tokens: number } })
              .usage ?? null,
        }
      : {}),
  };
}

/** The full record (GET /requests/{id}, the webhook body). */
export async function recordView(job: JobRow, v: ViewContext) {
  return { ...(await listItemView(job, v)), input: JSON.parse(job.input) as unknown };
}

/** The model output with media placeholders ({"$output": n}) replaced by fresh signed URLs. */
export async function renderOutput(job: JobRow, v: ViewContext): Promise<unknown> {
  const links = await v.outputUrls(job);
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      if (typeof o.$output === "number" && Object.keys(o).length === 1) return links[o.$output] ?? null;
      return Object.fromEntries(Object.entries(o).map(([k, val]) => [k, walk(val)]));
    }
    return x;
  };
  return walk(JSON.parse(job.output ?? "{}"));
}
