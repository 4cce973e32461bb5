/**
 * The operator's Margins page (/console/admin/margins) and its CSV (/console/admin/margins.csv): the
 * same report as GET /admin/v1/margins (src/admin/margins.ts), for a date range (default: this month,
 * UTC) by model, provider or account. Operators only (requireOperator: anyone else 403). GET only,
 * so no CSRF token. HTML in admin-margins-view.ts.
 */
import { Elysia } from "elysia";
import {
  MARGIN_CSV_HEADER,
  type MarginReport,
  marginCsvRows,
  marginReport,
  thisMonth,
} from "../admin/margins.ts";
import { csvStream, inPages } from "../lib/csv.ts";
import { DomainError } from "../lib/errors.ts";
import { type MarginForm, marginsBody } from "./admin-margins-view.ts";
import { adminPage } from "./admin-view.ts";
import { type ConsoleKit, type PageContext, requireOperator } from "./kit.ts";
import { csvResponse } from "./money-view.ts";

export const ADMIN_MARGINS = "/console/admin/margins";

/** The form's values: what the URL carries, this month by model when it carries nothing. */
function formOf(url: URL): MarginForm {
  const q = url.searchParams;
  const month = thisMonth();
  const get = (name: string) => (q.get(name) ?? "").trim().slice(0, 20);
  return { from: get("from") || month.from, to: get("to") || month.to, by: get("by") || "model" };
}

async function marginsPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const form = formOf(c.url);
  let report: MarginReport | null = null;
  let error: string | null = null;
  try {
    report = await marginReport(kit.ctx, form);
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
    error = err.message;
  }
  return adminPage(c, "Margins", ADMIN_MARGINS, marginsBody(form, report, error), error ? 400 : 200);
}

async function marginsCsv(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  // A bad range is the contract's 400 (the page's link always carries a valid one).
  const r = await marginReport(kit.ctx, formOf(c.url));
  // One line per model, provider or account with jobs in the range, and the totals: bounded by them.
  return csvResponse(
    `margins-${r.from}-${r.to}-by-${r.by}.csv`,
    csvStream(MARGIN_CSV_HEADER, inPages(marginCsvRows(r))),
  );
}

export function adminMarginsPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      ADMIN_MARGINS,
      kit.page((c) => marginsPage(c, kit)),
    )
    .get(
      `${ADMIN_MARGINS}.csv`,
      kit.page((c) => marginsCsv(c, kit)),
    );
}
