/**
 * Jobs for the margins report's tests, each opened as a door opens one (a hold reserved at its
 * quote and the job row inserted in one transaction), then moved through the JobStore's own
 * transitions at a chosen instant: completed (the hold settled at a charge), failed or cancelled (the
 * hold released). The upstream cost is then written on the row, as the routes' settlement writes it
 * (another part of issue 35), so these tests do not depend on it.
 */
import type { Sql } from "../../src/db/sql.ts";
import type { QueueServices, Services } from "../../src/server/context.ts";

export interface MarginJob {
  accountId: string;
  modelId: string;
  provider: string;
  status: "COMPLETED" | "FAILED" | "CANCELLED";
  /** When the job ends (epoch ms): what the report's date range is about. */
  endedAt: number;
  quoteUsdMicro: bigint;
  /** COMPLETED: what is charged, micro-USD (the ledger caps it at the quote). */
  chargeUsdMicro?: bigint;
  /** The upstream cost written on the row; null: unknown. */
  costUsdMicro: bigint | null;
}

export type MarginSeedDeps = Pick<Services, "ledger"> & Pick<QueueServices, "jobs"> & { sql: Sql };

/** Opens and ends one job; its id. */
export async function seedMarginJob(ctx: MarginSeedDeps, j: MarginJob): Promise<string> {
  const createdAt = j.endedAt - 1000;
  const id = Bun.randomUUIDv7("hex", createdAt);
  await ctx.sql.tx(async (tx) => {
    const hold = await ctx.ledger.in(tx).reserve({
      accountId: j.accountId,
      keyId: null,
      modelId: j.modelId,
      requestId: id,
      source: "API",
      quotedUsdMicro: j.quoteUsdMicro,
    });
    await ctx.jobs.in(tx).insert({
      id,
      accountId: j.accountId,
      keyId: null,
      modelId: j.modelId,
      kind: "image",
      source: "API",
      provider: j.provider,
      input: "{}",
      quote: JSON.stringify({ amount_usd_micro: String(j.quoteUsdMicro), unit: "image", units: "1" }),
      holdId: hold.id,
      webhookUrl: null,
      deadlineAt: createdAt + 86_400_000,
      createdAt,
    });
  });
  if (j.status === "CANCELLED") {
    if (!(await ctx.jobs.cancel(id, j.endedAt))) throw new Error("seed: cancel");
  } else {
    const claimed = await ctx.jobs.claimNext(j.provider, [], "seed", 86_400_000, createdAt);
    if (claimed?.id !== id) throw new Error("seed: claim");
    const ok =
      j.status === "COMPLETED"
        ? await ctx.jobs.complete(id, {}, [], j.chargeUsdMicro ?? j.quoteUsdMicro, null, 60_000, j.endedAt)
        : await ctx.jobs.fail(id, "upstream_error", "seeded failure", j.endedAt);
    if (!ok) throw new Error(`seed: ${j.status}`);
  }
  if (j.costUsdMicro !== null)
    await ctx.sql.run("UPDATE jobs SET cost_usd_micro = ? WHERE id = ?", [j.costUsdMicro, id]);
  return id;
}
