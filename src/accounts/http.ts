import { Elysia } from "elysia";
import type { AppContext } from "../server/context.ts";
import { accountReadRoutes } from "./account-http.ts";
import { keyRoutes } from "./keys-http.ts";

/**
 * The caller's own account under /v1, two route groups: the account, its wallet and spend
 * (account-http.ts), its keys (keys-http.ts, the manage right). Each group authenticates the key
 * itself (requirePrincipal), as the one module did.
 */
export function accountRoutes(ctx: AppContext) {
  return new Elysia().use(accountReadRoutes(ctx)).use(keyRoutes(ctx));
}
