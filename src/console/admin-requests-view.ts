/**
 * The operator's Requests page's filter form (admin-requests-pages.ts); the rows and the detail are
 * the account's Requests page's own (requests-view.ts, with an account column).
 */
import { html, type SafeHtml } from "../lib/html.ts";
import { JOB_STATUSES } from "../queue/requests.ts";

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
    ${options([["", "Any status"], ...JOB_STATUSES.map((s): [string, string] => [s, s])], f.status)}
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
