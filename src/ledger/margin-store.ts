import { SqlStore } from "../db/store.ts";

/** What the margins report groups by: the job's model, the provider that ran it, its account. */
export type MarginGroup = "model" | "provider" | "account";
export const MARGIN_GROUPS: readonly MarginGroup[] = ["model", "provider", "account"];

/** One group's sums, in micro-USD (docs/providers.md "Margins": what each figure means). */
export interface MarginSums {
  jobs: bigint;
  /** What was charged, in USD at each charge's own rate (holds.charged_usd_micro). */
  revenue_usd_micro: bigint;
  /** The sum of the known costs (jobs.cost_usd_micro not null). */
  cost_usd_micro: bigint;
  /** Jobs counted whose cost is unknown (no cost configured on the route that ran them). */
  cost_unknown_jobs: bigint;
  /** The part of the revenue that comes from those jobs (left out of the margin). */
  cost_unknown_revenue_usd_micro: bigint;
}

export interface MarginRow extends MarginSums {
  /** The model id, the provider's name or the account id. */
  group: string;
  /** The account's name (by account; null when the account is gone, or by model or provider). */
  name: string | null;
}

const COLUMN: Record<MarginGroup, string> = {
  model: "j.model_id",
  provider: "j.provider",
  account: "j.account_id",
};

/**
 * The jobs a report counts, and their sums, in one statement per grouping. A job counts when it
 * ended (completed_at, epoch ms) in [start, end) and either its hold was settled (a charge, which may
 * be 0) or a cost above 0 was recorded for it (a failed job the upstream billed: revenue 0, a loss
 * the report must show). Jobs released without a cost (failed: null; cancelled in the queue: 0, it
 * never reached an upstream) moved no money either way and are left out. The range walks jobs_completed (migration 026) and each row's hold by its
 * primary key: the cost grows with the jobs in the range, never with the history.
 */
export function marginSql(by: MarginGroup): string {
  const settled = "h.status = 'settled'";
  return `SELECT ${COLUMN[by]} AS grp,${by === "account" ? " max(a.name) AS name," : " NULL AS name,"}
       count(*) AS jobs,
       coalesce(sum(CASE WHEN ${settled} THEN h.charged_usd_micro ELSE 0 END), 0) AS revenue_usd_micro,
       coalesce(sum(j.cost_usd_micro), 0) AS cost_usd_micro,
       coalesce(sum(CASE WHEN j.cost_usd_micro IS NULL THEN 1 ELSE 0 END), 0) AS cost_unknown_jobs,
       coalesce(sum(CASE WHEN j.cost_usd_micro IS NULL AND ${settled} THEN h.charged_usd_micro ELSE 0 END), 0)
         AS cost_unknown_revenue_usd_micro
     FROM jobs j JOIN holds h ON h.id = j.hold_id${by === "account" ? " LEFT JOIN accounts a ON a.id = j.account_id" : ""}
     WHERE j.completed_at >= ? AND j.completed_at < ? AND (${settled} OR j.cost_usd_micro > 0)
     GROUP BY ${COLUMN[by]}
     ORDER BY ${COLUMN[by]}`;
}

type Raw = Omit<MarginRow, "group"> & { grp: string };

/** The margins report's reads (jobs with their holds); it writes nothing. */
export class MarginStore extends SqlStore {
  protected override s = {
    model: this.q<Raw, [number, number]>(marginSql("model")),
    provider: this.q<Raw, [number, number]>(marginSql("provider")),
    account: this.q<Raw, [number, number]>(marginSql("account")),
  };

  /** One row per group, ordered by it, over the jobs that ended in [startMs, endMs). */
  async report(by: MarginGroup, startMs: number, endMs: number): Promise<MarginRow[]> {
    const rows = await this.s[by].all(startMs, endMs);
    return rows.map(({ grp, ...sums }) => ({
      group: grp,
      name: sums.name ?? null,
      jobs: BigInt(sums.jobs),
      revenue_usd_micro: BigInt(sums.revenue_usd_micro),
      cost_usd_micro: BigInt(sums.cost_usd_micro),
      cost_unknown_jobs: BigInt(sums.cost_unknown_jobs),
      cost_unknown_revenue_usd_micro: BigInt(sums.cost_unknown_revenue_usd_micro),
    }));
  }
}
