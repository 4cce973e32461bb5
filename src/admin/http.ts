import { Elysia } from "elysia";
import { requireAdmin } from "../auth/authenticate.ts";
import type { AppContext } from "../server/context.ts";
import { adminAccountRoutes } from "./accounts-http.ts";
import { adminKeyRoutes } from "./keys-http.ts";
import { adminMarginRoutes } from "./margins-http.ts";
import { adminMoneyRoutes } from "./money-http.ts";
import { adminPeopleRoutes } from "./people-http.ts";
import { adminProviderRoutes } from "./providers-http.ts";
import { adminRequestRoutes } from "./requests-http.ts";

/**
 * The operator API under /admin/v1, behind the admin token. The groups hold the routes; this module
 * gives them the prefix, the tag, the security scheme and the token check, in the order the OpenAPI
 * document lists them.
 */
export function adminRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/admin/v1", detail: { tags: ["Admin"], security: [{ adminToken: [] }] } })
    .onTransform(({ request }) => {
      // Transform runs before validation: an unauthenticated caller learns nothing about bodies.
      requireAdmin(ctx, request);
    })
    .use(adminAccountRoutes(ctx))
    .use(adminKeyRoutes(ctx))
    .use(adminMoneyRoutes(ctx))
    .use(adminPeopleRoutes(ctx))
    .use(adminProviderRoutes(ctx))
    .use(adminMarginRoutes(ctx))
    .use(adminRequestRoutes(ctx));
}
