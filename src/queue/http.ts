import { Elysia } from "elysia";
import type { AppContext } from "../server/context.ts";
import { requestRoutes } from "./requests-http.ts";
import { resultRoutes } from "./result-http.ts";
import { statusRoutes } from "./status-http.ts";
import { submitRoutes } from "./submit-http.ts";

/**
 * The asynchronous half of the API under /v1: submit, run, read, stream and cancel jobs. Each group
 * authenticates the key itself (`principal`); this module only gives them the prefix, the tag and
 * the security scheme, in the order the OpenAPI document lists them.
 */
export function queueRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Queue"], security: [{ apiKey: [] }] } })
    .use(submitRoutes(ctx))
    .use(requestRoutes(ctx))
    .use(statusRoutes(ctx))
    .use(resultRoutes(ctx));
}
