/**
 * Jobs with known times, for the requests figures' tests: each is opened as a door opens one (a
 * hold reserved and the row inserted in one transaction) with a UUIDv7 id of its creation instant,
 * then, through the JobStore's own transitions at chosen instants, claimed and completed, failed or
 * cancelled. Each job has a provider of its own, so nothing else claims it and claimNext takes it.
 */
import type { Sql } from "../../src/db/sql.ts";
import type { JobStatus } from "../../src/queue/job-row.ts";
import type { QueueServices, Services } from "../../src/server/context.ts";

export interface SeedJob {
  createdAt: number;
  /** Final or open state: IN_QUEUE stays queued, IN_PROGRESS is claimed only. */
  status: JobStatus;
  /** Submit to start (ignored for IN_QUEUE and CANCELLED: those never start). */
  queuedMs?: number;
  /** Start to end. */
  runMs?: number;
  /** CANCELLED: submit to the cancel. */
  cancelAfterMs?: number;
  modelId?: string;
  keyId?: string | null;
  source?: "API" | "STUDIO";
  /** Charged when COMPLETED, micro-USD (the quote is 1000). */
  chargeUsdMicro?: bigint;
}

let n = 0;

export async function seedJob(
  ctx: Pick<Services, "ledger"> & Pick<QueueServices, "jobs"> & { sql: Sql },
  accountId: string,
  j: SeedJob,
): Promise<string> {
  const id = Bun.randomUUIDv7("hex", j.createdAt);
  const provider = `seed-${++n}-${Math.random().toString(36).slice(2)}`;
  const keyId = j.keyId ?? null;
  await ctx.sql.tx(async (tx) => {
    const hold = await ctx.ledger.in(tx).reserve({
      accountId,
      keyId,
      modelId: j.modelId ?? "sandbox/image",
      requestId: id,
      source: j.source ?? "API",
      quotedUsdMicro: 1000n,
    });
    await ctx.jobs.in(tx).insert({
      id,
      accountId,
      keyId,
      modelId: j.modelId ?? "sandbox/image",
      kind: "image",
      source: j.source ?? "API",
      provider,
      input: "{}",
      quote: JSON.stringify({ amount_usd_micro: "1000", unit: "image", units: "1" }),
      holdId: hold.id,
      webhookUrl: null,
      deadlineAt: j.createdAt + 86_400_000,
      createdAt: j.createdAt,
    });
  });
  if (j.status === "IN_QUEUE") return id;
  if (j.status === "CANCELLED") {
    if (!(await ctx.jobs.cancel(id, j.createdAt + (j.cancelAfterMs ?? 0)))) throw new Error("seed: cancel");
    return id;
  }
  const started = j.createdAt + (j.queuedMs ?? 0);
  const claimed = await ctx.jobs.claimNext(provider, [], "seed", 86_400_000, started);
  if (claimed?.id !== id) throw new Error("seed: claim");
  const ended = started + (j.runMs ?? 0);
  if (j.status === "COMPLETED") {
    const ok = await ctx.jobs.complete(id, {}, [], j.chargeUsdMicro ?? 1000n, null, 60_000, ended);
    if (!ok) throw new Error("seed: complete");
  } else if (j.status === "FAILED") {
    if (!(await ctx.jobs.fail(id, "upstream_error", "seeded failure", ended))) throw new Error("seed: fail");
  }
  return id;
}
