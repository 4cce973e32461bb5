/**
 * Requests: every job of the account (API and studio), newest first, filtered by key, model,
 * status, source, date range and exact id, with cursor paging and the figures over the filter; and
 * one request's detail (input, timeline, price, outputs with fresh signed links and previews,
 * error). Thin: reads listRequests / requestStats / findRequest / requestDetail (src/queue/requests.ts),
 * which scope every query to the session's account. The live refresh and `Cancel request` are
 * requests-live-pages.ts. `/console/requests.csv`: every request under the same filters, streamed
 * (requestsCsv).
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import type { SafeHtml } from "../lib/html.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { findRequest, listRequests, requestDetail, requestStats, requestsCsv } from "../queue/requests.ts";
import { type ConsoleKit, htmlResponse, type PageContext, redirect, requireAccount } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { csvResponse } from "./money-view.ts";
import { cancelForm, cancelNotice, filterForm, NO_FILTERS, requestsBody } from "./requests-list-view.ts";
import { requestsLivePages } from "./requests-live-pages.ts";
import { filtersOf, noticeOf, requestFiltersOf } from "./requests-shared.ts";
import { requestDetailBody } from "./requests-view.ts";

const PAGE_SIZE = 50;

/** A refused filter: its message for the page, and the status (400 bad value, 404 unknown id). */
function refused(err: unknown): { message: string; status: number } {
  if (err instanceof DomainError && err.code === "validation_error")
    return { message: `${err.message} Choose the filters again.`, status: 400 };
  if (err instanceof DomainError && err.code === "not_found") return { message: err.message, status: 404 };
  throw err;
}

async function listPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const f = filtersOf(c.url);
  const cursor = (c.url.searchParams.get("cursor") ?? "").trim() || null;
  let error: { message: string; status: number } | null = null;
  let page: Awaited<ReturnType<typeof listRequests>> | null = null;
  let stats: Awaited<ReturnType<typeof requestStats>> | null = null;
  try {
    // An exact id goes straight to its page; another account's id is "not found", like an unknown one.
    if (f.id) return redirect(`/console/requests/${await findRequest(kit.ctx, s.accountId, f.id)}`);
    const filters = { cursor, ...requestFiltersOf(f) };
    // One read per step, each after the API's waiting work (src/lib/low-priority.ts).
    page = await listRequests(kit.ctx, s.accountId, { ...filters, limit: PAGE_SIZE });
    await lowPriorityTurn();
    stats = await requestStats(kit.ctx, s.accountId, filters);
  } catch (err) {
    error = refused(err);
  }
  // A refused id keeps what was typed (to correct it); other refused filters start again.
  const shown = error ? { ...NO_FILTERS, id: error.status === 404 ? f.id : "" } : f;
  const models = kit.ctx.catalog.models.map((m) => m.id);
  if (shown.model && !models.includes(shown.model)) models.unshift(shown.model);
  const keys = await kit.ctx.accounts.listKeys(s.accountId);
  await lowPriorityTurn();
  const body = requestsBody({
    form: filterForm(keys, models, shown),
    filters: f,
    cursor,
    page,
    stats,
    error: error?.message ?? null,
    notice: noticeOf(c.url),
    csrf: csrfField(s),
    back: c.url.pathname + c.url.search,
  });
  return htmlResponse(await c.layout({ title: "Requests", active: "requests", body }), error?.status ?? 200);
}

/** Every request under the list's filters as CSV (a stream); a bad filter is the list's 400 page. */
async function requestsCsvDownload(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const body = await requestsCsv(kit.ctx, s.accountId, requestFiltersOf(filtersOf(c.url)));
  return csvResponse("requests.csv", body);
}

async function detailPage(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const d = await requestDetail(kit.ctx, s.accountId, c.params.id ?? "");
  const notice = noticeOf(c.url);
  const body = requestDetailBody(kit, d, {
    cancel: cancelForm(d.id, csrfField(s), `/console/requests/${d.id}`),
    // The page itself says a request was cancelled; a refused cancel says why.
    notice: notice?.id === d.id && notice.kind === "not-cancellable" ? cancelNotice(notice) : null,
  });
  return c.layout({ title: "Request", active: "requests", body });
}

export function requestsPages(kit: ConsoleKit) {
  return new Elysia()
    .use(requestsLivePages(kit))
    .get(
      "/console/requests",
      kit.page(async (c) => await listPage(c, kit)),
    )
    .get(
      "/console/requests.csv",
      kit.page(async (c) => await requestsCsvDownload(c, kit)),
    )
    .get(
      "/console/requests/:id",
      kit.page(async (c) => await detailPage(c, kit)),
    );
}
