/**
 * The operator's Requests page (admin-requests-pages.ts): its filter form and body. The rows and the
 * detail are the account's Requests page's own (requests-list-view.ts `requestTable` with an Account
 * column and no actions; requests-view.ts `requestDetailBody` with the account).
 */

import { html, type SafeHtml } from "../lib/html.ts";
import type { AccountRequest } from "../queue/all-requests.ts";
import { JOB_STATUSES } from "../queue/request-filters.ts";
import { formError } from "./kit.ts";
import { requestTable } from "./requests-list-view.ts";
import { STATUS_WORDS } from "./requests-view.ts";

export const ADMIN_REQUESTS = "/console/admin/requests";

/** The filters as typed (each a query parameter of the same name). */
export interface AllFilters {
  account: string;
  key: string;
  model: string;
  status: string;
  source: string;
  id: string;
  from: string;
  to: string;
}

export const NO_FILTERS: AllFilters = {
  account: "",
  key: "",
  model: "",
  status: "",
  source: "",
  id: "",
  from: "",
  to: "",
};

function options(values: [string, string][], current: string): SafeHtml[] {
  return values.map(
    ([v, label]) => html`<option value="${v}"${v === current ? html` selected` : null}>${label}</option>`,
  );
}

export function allFiltersForm(models: string[], f: AllFilters): SafeHtml {
  const any = Object.values(f).some((v) => v !== "");
  return html`<form class="filters" method="get" action="${ADMIN_REQUESTS}" role="search" aria-label="Filter requests">
  <label>Account <input name="account" value="${f.account}" maxlength="80" placeholder="acct_…" autocomplete="off" spellcheck="false"></label>
  <label>Key <input name="key" value="${f.key}" maxlength="80" placeholder="key_…" autocomplete="off" spellcheck="false"></label>
  <label>Model <select name="model">
    ${options([["", "All models"], ...models.map((m): [string, string] => [m, m])], f.model)}
  </select></label>
  <label>Status <select name="status">
    ${options([["", "Any status"], ...JOB_STATUSES.map((s): [string, string] => [s, STATUS_WORDS[s] ?? s])], f.status)}
  </select></label>
  <label>Source <select name="source">
    ${options(
      [
        ["", "API and studio"],
        ["API", "API"],
        ["STUDIO", "Studio"],
      ],
      f.source,
    )}
  </select></label>
  <label>Request id <input name="id" value="${f.id}" maxlength="80" autocomplete="off" spellcheck="false"></label>
  <label>From <input name="from" type="date" value="${f.from}"></label>
  <label>To <input name="to" type="date" value="${f.to}"></label>
  <button type="submit">Filter</button>
  ${any ? html`<a href="${ADMIN_REQUESTS}">Clear filters</a>` : null}
</form>`;
}

/** A list page's query string: every non-empty filter, and the cursor. */
function allQuery(f: AllFilters, cursor?: string | null): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The page's body: the filters, the error, a page of rows with their accounts, the paging links. */
export function allRequestsBody(p: {
  form: SafeHtml;
  filters: AllFilters;
  cursor: string | null;
  page: { items: AccountRequest[]; next_cursor: string | null } | null;
  error: string | null;
}): SafeHtml {
  const { page, filters: f } = p;
  const names = new Map(page?.items.map((r) => [r.id, r.account_name]) ?? []);
  const table = {
    csrf: null,
    back: ADMIN_REQUESTS,
    base: ADMIN_REQUESTS,
    account: (r: { id: string; account_id: string }) =>
      html`<a href="/console/admin/accounts/${r.account_id}">${names.get(r.id) ?? r.account_id}</a>`,
  };
  return html`<h1>Requests</h1>
<p class="hint">Every account's requests, from the API and the studio, newest first.</p>
${p.form}
${formError(p.error)}
${page ? requestTable(page.items, table) : null}
${
  page?.next_cursor
    ? html`<p><a class="button secondary" href="${ADMIN_REQUESTS}${allQuery(f, page.next_cursor)}">Older</a></p>`
    : null
}
${p.cursor && !p.error ? html`<p><a href="${ADMIN_REQUESTS}${allQuery(f)}">Newest</a></p>` : null}`;
}
