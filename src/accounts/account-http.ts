import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { paging, sequenceCursor } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import { parseMonth } from "../ledger/month.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { AccountSchema, LedgerPageSchema, LedgerQuery, SpendQuery, SpendSchema } from "./schemas.ts";
import type { Principal } from "./store.ts";
import { type AccountSummaryDeps, accountBody } from "./summary.ts";

async function getAccount(ctx: AccountSummaryDeps, principal: Principal) {
  return await accountBody(ctx, principal.accountId);
}

async function listLedger(
  ctx: Pick<AppContext, "wallet">,
  principal: Principal,
  query: { limit?: string; cursor?: string },
) {
  const page = paging(query, sequenceCursor);
  return await ctx.wallet.entries(principal.accountId, page.limit, page.cursor);
}

async function getSpend(
  ctx: Pick<AppContext, "wallet" | "ledger">,
  principal: Principal,
  query: { month?: string },
) {
  const month = query.month === undefined ? ctx.ledger.currentMonth() : parseMonth(query.month);
  if (!month)
    throw new DomainError("validation_error", `month must be YYYY-MM (got "${query.month}").`, {
      param: "month",
    });
  return await ctx.wallet.spend(principal.accountId, month);
}

/** The caller's own account: balance, wallet entries, spend by key and model. */
export function accountReadRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/account", ({ principal }) => getAccount(ctx, principal), {
      detail: {
        tags: ["Account"],
        summary: "Get the account",
        description: "Currency, balance, held, available and this month's spend.",
      },
      response: { 200: AccountSchema, ...errors(401) },
    })
    .get("/account/ledger", ({ principal, query }) => listLedger(ctx, principal, query), {
      query: LedgerQuery,
      detail: {
        tags: ["Account"],
        summary: "List wallet entries",
        description:
          "Every balance movement, newest first, labelled API, STUDIO or ADMIN. Page with ?cursor=next_cursor.",
      },
      response: { 200: LedgerPageSchema, ...errors(400, 401) },
    })
    .get("/account/spend", ({ principal, query }) => getSpend(ctx, principal, query), {
      query: SpendQuery,
      detail: {
        tags: ["Account"],
        summary: "Get spend by key and model",
        description: "Charges of one calendar month (UTC).",
      },
      response: { 200: SpendSchema, ...errors(400, 401) },
    });
}
