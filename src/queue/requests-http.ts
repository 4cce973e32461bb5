import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors } from "../http/schemas.ts";
import { UUID_PATTERN as UUID } from "../lib/ids.ts";
import type { AppContext } from "../server/context.ts";
import { listRequests, ownedJob } from "./ownership.ts";
import { IdParams, RecordListSchema, RecordSchema } from "./schemas.ts";

const ListQuery = t.Object({
  ...PagingQuery,
  status: t.Optional(
    t.Union([
      t.Literal("IN_QUEUE"),
      t.Literal("IN_PROGRESS"),
      t.Literal("COMPLETED"),
      t.Literal("FAILED"),
      t.Literal("CANCELLED"),
    ]),
  ),
  model_id: t.Optional(t.String({ maxLength: 256 })),
});

/** GET /v1/requests and GET /v1/requests/{id}: the account's requests and one full record. */
export function requestRoutes(ctx: AppContext) {
  async function list({ principal, query }: { principal: Principal; query: typeof ListQuery.static }) {
    const { limit, cursor } = paging(query, idCursor(UUID));
    return await listRequests(ctx, principal.accountId, {
      limit,
      before: cursor,
      status: query.status,
      modelId: query.model_id,
    });
  }

  async function record({ principal, params }: { principal: Principal; params: { id: string } }) {
    return await ctx.views.record(await ownedJob(ctx, principal, params.id));
  }

  return new Elysia()
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/requests", list, {
      query: ListQuery,
      detail: {
        summary: "List requests",
        description: "The account's requests, newest first, without their input.",
      },
      response: { 200: RecordListSchema, ...errors(400, 401) },
    })
    .get("/requests/:id", record, {
      params: IdParams,
      detail: {
        summary: "Get a request",
        description: "The full record: status, input, price and fresh output_urls.",
      },
      response: { 200: RecordSchema, ...errors(400, 401, 404) },
    });
}
