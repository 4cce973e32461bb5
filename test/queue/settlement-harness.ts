import type { Provider } from "../../src/providers/types.ts";
import { pollUntil } from "../helpers/api.ts";
import { readBlob } from "../helpers/blobs.ts";
import { json, makeTestApp, testWorkerPool } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";

/**
 * An in-process gateway whose worker pool runs one real provider (pointed at a mock upstream), so
 * a test can submit through the API and read what the settlement charged: the hold, the charge,
 * the units recorded, the delivered files, and whether the ledger still reconciles.
 */
export async function settlementHarness(o: {
  models: unknown[];
  provider: Provider;
  providerConfig?: Record<string, unknown>;
}) {
  const t = await makeTestApp({
    models: o.models,
    ...(o.providerConfig ? { providers: { [o.provider.name]: o.providerConfig } } : {}),
  });
  await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  t.ctx.providers.set(o.provider.name, o.provider);
  const pool = testWorkerPool(t.ctx, { concurrency: () => 2 });

  /** Submits, waits for a final state, and returns what was held, charged and delivered. */
  async function run(model: string, body: Record<string, unknown>) {
    const res = await t.request(`/v1/queue/${model}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const submitted = await json<{ request_id?: string; error?: unknown }>(res);
    if (!submitted.request_id) throw new Error(`submit failed: ${JSON.stringify(submitted)}`);
    const id = submitted.request_id;
    const job = await pollUntil(
      async () => (await t.ctx.jobs.get(id))!,
      (j) => j.status === "COMPLETED" || j.status === "FAILED",
      20_000,
    );
    const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
    const paths = await t.ctx.sql.all<{ path: string }>(
      "SELECT path FROM job_outputs WHERE job_id = ? ORDER BY idx",
      [id],
    );
    const files = await Promise.all(paths.map((r) => readBlob(t.ctx.blobs, r.path)));
    return {
      status: job.status,
      error: job.error_message,
      held: hold.amount_micro,
      charged: hold.status === "settled" ? (hold.charged_usd_micro ?? 0n) : 0n,
      units: job.actual_units,
      output: job.output ? (JSON.parse(job.output) as Record<string, any>) : null,
      files,
      invariants: await checkInvariants(t.ctx.sql),
    };
  }
  return { t, run, stop: () => pool.stop(1000) };
}
