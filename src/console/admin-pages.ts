/**
 * The operator pages under /console/admin: accounts (admin-accounts-pages.ts: search, credit and
 * adjust with a required reason; admin-account-actions-pages.ts: create, disable and enable, revoke
 * a key), requests across accounts (admin-requests-pages.ts), people and invites (admin-people-pages.ts: an invite or a
 * password-reset link, shown once; revoke an invite), providers' health and FX rates
 * (admin-providers-pages.ts), margins (admin-margins-pages.ts). Every route calls requireOperator first: anyone else gets 403, on
 * pages and actions alike. Money and links go through the same services as the admin API and the
 * CLI (src/admin/operations.ts, the people services of src/people/). The shared frame: admin-view.ts.
 */
import { Elysia } from "elysia";
import { adminAccountActionsPages } from "./admin-account-actions-pages.ts";
import { adminAccountsPages } from "./admin-accounts-pages.ts";
import { adminMarginsPages } from "./admin-margins-pages.ts";
import { adminPeoplePages } from "./admin-people-pages.ts";
import { adminProvidersPages } from "./admin-providers-pages.ts";
import { adminRequestsPages } from "./admin-requests-pages.ts";
import type { ConsoleKit } from "./kit.ts";

export function adminPages(kit: ConsoleKit) {
  return new Elysia()
    .use(adminAccountsPages(kit))
    .use(adminAccountActionsPages(kit))
    .use(adminRequestsPages(kit))
    .use(adminPeoplePages(kit))
    .use(adminProvidersPages(kit))
    .use(adminMarginsPages(kit));
}
