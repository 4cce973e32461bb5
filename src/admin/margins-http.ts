import { Elysia, t } from "elysia";
import { errors, MicroString } from "../http/schemas.ts";
import { type MarginFigures, type MarginReport, type MarginsDeps, marginReport } from "./margins.ts";

const Figures = {
  jobs: t.Integer({ description: "Jobs counted: settled (charged, possibly 0), or with a recorded cost." }),
  revenue_usd_micro: MicroString("What was charged, in micro-USD at the rate of each charge."),
  cost_usd_micro: MicroString("The sum of the known upstream costs."),
  margin_usd_micro: MicroString(
    "Revenue minus cost of the jobs whose cost is known (the unknown-cost jobs' revenue is left out).",
  ),
  cost_unknown_jobs: t.Integer({ description: "Jobs counted whose cost is unknown (not zero)." }),
  cost_unknown_revenue_usd_micro: MicroString("The revenue of those jobs."),
};

const MarginRowSchema = t.Object(
  {
    group: t.String({ description: "The model id, the provider's name or the account id." }),
    name: t.Union([t.String(), t.Null()], { description: "The account's name (by=account), else null." }),
    ...Figures,
  },
  { title: "MarginRow" },
);

const MarginReportSchema = t.Object(
  {
    from: t.String(),
    to: t.String(),
    by: t.String(),
    data: t.Array(MarginRowSchema),
    totals: t.Object(Figures),
  },
  { title: "MarginReport" },
);

const MarginQuerySchema = t.Object({
  from: t.Optional(t.String({ maxLength: 10, description: "First day, YYYY-MM-DD (UTC), included." })),
  to: t.Optional(
    t.String({ maxLength: 10, description: "Last day, YYYY-MM-DD (UTC), included; at most 366 days." }),
  ),
  by: t.Optional(t.String({ maxLength: 10, description: "model (default), provider or account." })),
});

function figuresJson(f: MarginFigures) {
  return {
    jobs: f.jobs,
    revenue_usd_micro: f.revenue_usd_micro.toString(),
    cost_usd_micro: f.cost_usd_micro.toString(),
    margin_usd_micro: f.margin_usd_micro.toString(),
    cost_unknown_jobs: f.cost_unknown_jobs,
    cost_unknown_revenue_usd_micro: f.cost_unknown_revenue_usd_micro.toString(),
  };
}

function reportJson(r: MarginReport) {
  return {
    from: r.from,
    to: r.to,
    by: r.by,
    data: r.data.map((l) => ({ group: l.group, name: l.name, ...figuresJson(l) })),
    totals: figuresJson(r.totals),
  };
}

/** GET /admin/v1/margins: revenue, upstream cost and margin of the jobs that ended in a date range. */
export function adminMarginRoutes(deps: MarginsDeps) {
  async function margins({ query }: { query: { from?: string; to?: string; by?: string } }) {
    return reportJson(await marginReport(deps, query));
  }

  return new Elysia().get("/margins", margins, {
    query: MarginQuerySchema,
    detail: {
      summary: "Margins by model, provider or account",
      description:
        "Jobs that ended in the range (UTC days, both included): what was charged (USD at each charge's rate), what the upstreams cost (known costs only) and the margin, one row per model, provider or account, with totals.",
    },
    response: { 200: MarginReportSchema, ...errors(400, 401) },
  });
}
