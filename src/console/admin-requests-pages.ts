/**
 * The operator's Requests across every account (/console/admin/requests): newest first with an
 * account column, filtered by account, key, model, status, source, request id and date range, paged
 * by cursor; and any account's request's page. Thin: listAllRequests / anyRequestDetail
 * (src/queue/all-requests.ts); the rows and the detail are requests-view.ts's. Operators only.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { anyRequestDetail, listAllRequests } from "../queue/all-requests.ts";
import {
  ADMIN_REQUESTS,
  type AllFilters,
  allFiltersForm,
  allRequestsBody,
  NO_FILTERS,
} from "./admin-requests-view.ts";
import { adminPage } from "./admin-view.ts";
import { type ConsoleKit, type PageContext, requireOperator } from "./kit.ts";
import { requestDetailBody } from "./requests-view.ts";

const PAGE_SIZE = 50;

function filtersOf(url: URL): AllFilters {
  const get = (n: string) => (url.searchParams.get(n) ?? "").trim().slice(0, 300);
  return {
    account: get("account"),
    key: get("key"),
    model: get("model"),
    status: get("status"),
    source: get("source"),
    id: get("id").toLowerCase(),
    from: get("from"),
    to: get("to"),
  };
}

async function listPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const f = filtersOf(c.url);
  const cursor = (c.url.searchParams.get("cursor") ?? "").trim() || null;
  let error: string | null = null;
  let page: Awaited<ReturnType<typeof listAllRequests>> | null = null;
  try {
    page = await listAllRequests(kit.ctx, {
      limit: PAGE_SIZE,
      cursor,
      accountId: f.account || null,
      keyId: f.key || null,
      modelId: f.model || null,
      status: f.status || null,
      source: f.source || null,
      requestId: f.id || null,
      from: f.from || null,
      to: f.to || null,
    });
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "validation_error") throw err;
    error = `${err.message} Choose the filters again.`;
  }
  const shown = error ? NO_FILTERS : f;
  const models = kit.ctx.catalog.models.map((m) => m.id);
  if (shown.model && !models.includes(shown.model)) models.unshift(shown.model);
  // The paging links carry every filter.
  const body = allRequestsBody({ form: allFiltersForm(models, shown), filters: f, cursor, page, error });
  return adminPage(c, "Requests", ADMIN_REQUESTS, body, error ? 400 : 200);
}

async function detailPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  requireOperator(c.session);
  const { detail, account, route } = await anyRequestDetail(kit.ctx, c.params.id ?? "");
  return adminPage(
    c,
    "Request",
    ADMIN_REQUESTS,
    requestDetailBody(kit, detail, { cancel: null, notice: null }, { ...account, route }),
  );
}

export function adminRequestsPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      ADMIN_REQUESTS,
      kit.page((c) => listPage(c, kit)),
    )
    .get(
      `${ADMIN_REQUESTS}/:id`,
      kit.page((c) => detailPage(c, kit)),
    );
}
