import { MARGIN_GROUPS, type MarginGroup, type MarginRow, type MarginStore } from "../ledger/margin-store.ts";
import { bad, dayStart } from "../queue/request-filters.ts";

/**
 * The operator's margins report (GET /admin/v1/margins, the console's Margins page and its CSV):
 * what the jobs that ended in a date range earned and cost, by model, provider or account. The rules
 * (which jobs count, what the margin is of) are docs/providers.md "Margins".
 */
export interface MarginsDeps {
  margins: Pick<MarginStore, "report">;
}

export interface MarginQuery {
  /** First day, "YYYY-MM-DD" (UTC), included. */
  from?: string | null;
  /** Last day, "YYYY-MM-DD" (UTC), included. */
  to?: string | null;
  by?: string | null;
}

/** One row (or the totals) as the API, the page and the CSV show it. */
export interface MarginFigures {
  jobs: number;
  revenue_usd_micro: bigint;
  cost_usd_micro: bigint;
  /** Revenue minus cost of the jobs whose cost is known; the unknown-cost jobs' revenue is left out. */
  margin_usd_micro: bigint;
  cost_unknown_jobs: number;
  cost_unknown_revenue_usd_micro: bigint;
}

export type MarginLine = MarginFigures & { group: string; name: string | null };

export interface MarginReport {
  from: string;
  to: string;
  by: MarginGroup;
  data: MarginLine[];
  totals: MarginFigures;
}

/** A report spans at most 366 days (a leap year): the index walk stays bounded. */
export const MAX_DAYS = 366;
const DAY_MS = 86_400_000;

function figures(r: Omit<MarginRow, "group" | "name">): MarginFigures {
  return {
    jobs: Number(r.jobs),
    revenue_usd_micro: r.revenue_usd_micro,
    cost_usd_micro: r.cost_usd_micro,
    margin_usd_micro: r.revenue_usd_micro - r.cost_unknown_revenue_usd_micro - r.cost_usd_micro,
    cost_unknown_jobs: Number(r.cost_unknown_jobs),
    cost_unknown_revenue_usd_micro: r.cost_unknown_revenue_usd_micro,
  };
}

/** This month so far, UTC: the console's default range. */
export function thisMonth(now = new Date()): { from: string; to: string } {
  const day = now.toISOString().slice(0, 10);
  return { from: `${day.slice(0, 8)}01`, to: day };
}

/** The query checked: both dates required, from <= to, at most MAX_DAYS days; `by` one of the groups. */
export function checkedMarginQuery(q: MarginQuery): { from: string; to: string; by: MarginGroup } {
  if (!q.from) bad("from", "from is required: the first day, YYYY-MM-DD (UTC).");
  if (!q.to) bad("to", "to is required: the last day, YYYY-MM-DD (UTC), included.");
  const by = (q.by || "model") as MarginGroup;
  if (!MARGIN_GROUPS.includes(by)) bad("by", `by must be ${MARGIN_GROUPS.join(", ")}.`);
  const start = dayStart(q.from, "from");
  const end = dayStart(q.to, "to");
  if (end < start) bad("to", "to must be on or after from.");
  if ((end - start) / DAY_MS + 1 > MAX_DAYS) bad("to", `A report spans at most ${MAX_DAYS} days.`);
  return { from: q.from, to: q.to, by };
}

export async function marginReport(deps: MarginsDeps, q: MarginQuery): Promise<MarginReport> {
  const { from, to, by } = checkedMarginQuery(q);
  const rows = await deps.margins.report(by, dayStart(from, "from"), dayStart(to, "to") + DAY_MS);
  const sum = {
    jobs: 0n,
    revenue_usd_micro: 0n,
    cost_usd_micro: 0n,
    cost_unknown_jobs: 0n,
    cost_unknown_revenue_usd_micro: 0n,
  };
  for (const r of rows) {
    sum.jobs += r.jobs;
    sum.revenue_usd_micro += r.revenue_usd_micro;
    sum.cost_usd_micro += r.cost_usd_micro;
    sum.cost_unknown_jobs += r.cost_unknown_jobs;
    sum.cost_unknown_revenue_usd_micro += r.cost_unknown_revenue_usd_micro;
  }
  return {
    from,
    to,
    by,
    data: rows.map((r) => ({ group: r.group, name: r.name, ...figures(r) })),
    totals: figures(sum),
  };
}

/** The report's CSV columns, exact micro-USD (the console's download; the same rows as the API). */
export const MARGIN_CSV_HEADER = [
  "group",
  "name",
  "jobs",
  "revenue_usd_micro",
  "cost_usd_micro",
  "margin_usd_micro",
  "cost_unknown_jobs",
  "cost_unknown_revenue_usd_micro",
] as const;

export function marginCsvRows(r: MarginReport): (string | number | bigint | null)[][] {
  const line = (group: string, name: string | null, f: MarginFigures) => [
    group,
    name,
    f.jobs,
    f.revenue_usd_micro,
    f.cost_usd_micro,
    f.margin_usd_micro,
    f.cost_unknown_jobs,
    f.cost_unknown_revenue_usd_micro,
  ];
  return [...r.data.map((l) => line(l.group, l.name, l)), line("total", null, r.totals)];
}
