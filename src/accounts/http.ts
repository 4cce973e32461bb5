import { Elysia } from "elysia";
import { requirePrincipal } from "../auth/authenticate.ts";
import { ApiError } from "../http/errors.ts";
import { errors } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { accountView } from "./accounts.ts";
import { AccountSchema } from "./schemas.ts";

/** The caller's own account. Key management and the wallet build on this module. */
export function accountRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Account"], security: [{ apiKey: [] }] } })
    .derive(({ request }) => ({ principal: requirePrincipal(ctx, request) }))
    .get(
      "/account",
      ({ principal }) => {
        const account = ctx.accounts.getAccount(principal.accountId);
        if (!account) throw new ApiError("unauthorized", "The key's account no longer exists.");
        return accountView(account);
      },
      {
        detail: { summary: "Get the account", description: "Currency, balance, held and available amounts." },
        response: { 200: AccountSchema, ...errors(401) },
      },
    );
}
