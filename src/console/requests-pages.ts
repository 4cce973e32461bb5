/**
 * Requests: every job of the account (API and studio), newest first, filtered by key, model,
 * status and source, with cursor paging; and one request's detail (input, timeline, price, outputs
 * with fresh signed links and previews, error). Thin: reads listRequests / requestDetail
 * (src/queue/requests.ts), which scope every query to the session's account.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import type { SafeHtml } from "../lib/html.ts";
import { listRequests, type RequestFilters, requestDetail } from "../queue/requests.ts";
import { type ConsoleKit, htmlResponse, type PageContext, requireAccount } from "./kit.ts";
import { type Filters, filterForm, requestDetailBody, requestsBody } from "./requests-view.ts";

const PAGE_SIZE = 50;

function filtersOf(url: URL): Filters {
  const get = (n: string) => (url.searchParams.get(n) ?? "").trim().slice(0, 300);
  return { key: get("key"), model: get("model"), status: get("status"), source: get("source") };
}

async function listPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireAccount(c.session);
  const f = filtersOf(c.url);
  const cursor = (c.url.searchParams.get("cursor") ?? "").trim() || null;
  const filters: RequestFilters = {
    limit: PAGE_SIZE,
    cursor,
    keyId: f.key || null,
    modelId: f.model || null,
    status: f.status || null,
    source: f.source || null,
  };
  let error: string | null = null;
  let page: Awaited<ReturnType<typeof listRequests>> | null = null;
  try {
    page = await listRequests(kit.ctx, s.accountId, filters);
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
    error = `${err.message} Choose the filters again.`;
  }
  const shownFilters = error ? { key: "", model: "", status: "", source: "" } : f;
  const models = kit.ctx.catalog.models.map((m) => m.id);
  if (shownFilters.model && !models.includes(shownFilters.model)) models.unshift(shownFilters.model);
  const form = filterForm(await kit.ctx.accounts.listKeys(s.accountId), models, shownFilters);
  const body = requestsBody(form, f, cursor, page, error);
  return htmlResponse(await c.layout({ title: "Requests", active: "requests", body }), error ? 400 : 200);
}

async function detailPage(c: PageContext, kit: ConsoleKit): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const d = await requestDetail(kit.ctx, s.accountId, c.params.id ?? "");
  const body = requestDetailBody(kit, d);
  return c.layout({ title: "Request", active: "requests", body });
}

export function requestsPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/requests",
      kit.page(async (c) => await listPage(c, kit)),
    )
    .get(
      "/console/requests/:id",
      kit.page(async (c) => await detailPage(c, kit)),
    );
}
