import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { jsonResponse } from "../http/schemas.ts";
import { claimOf, REPLAYED_HEADER } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import { UUID_PATTERN as UUID } from "../lib/ids.ts";
import type { AppContext } from "../server/context.ts";
import { OPENAPI } from "./openapi.ts";
import {
  cancelPrediction,
  createPrediction,
  getPrediction,
  listPredictions,
  preferWait,
} from "./predictions.ts";
import { PredictionBody, PredictionPageSchema, PredictionSchema, problems } from "./schemas.ts";
import { predictionStream, streamedJob } from "./stream.ts";

type Create = {
  principal: Principal;
  request: Request;
  body: typeof PredictionBody.static;
  params?: { owner?: string; name?: string };
};
type ById = { principal: Principal; params: { id: string } };

const StreamQuery = t.Object({ exp: t.Optional(t.String()), sig: t.Optional(t.String()) });
type StreamQuery = typeof StreamQuery.static;
const IdParams = t.Object({ id: t.String({ description: "The prediction id: a request id (UUID)." }) });

/** Replicate's predictions API (docs/clients.md "Replicate"), for the `replicate` client libraries. */
export function replicateRoutes(ctx: AppContext) {
  async function create({ principal, request, body, params }: Create) {
    const { prediction, replayed } = await createPrediction(ctx, {
      who: apiOpener(ctx, principal),
      model: params?.owner && params.name ? `${params.owner}/${params.name}` : null,
      body,
      claim: claimOf(request, body),
      waitSeconds: preferWait(request.headers.get("prefer")),
      signal: request.signal,
    });
    return jsonResponse(JSON.stringify(prediction), 201, replayed ? { [REPLAYED_HEADER]: "true" } : {});
  }

  async function get({ principal, params }: ById) {
    return jsonResponse(JSON.stringify(await getPrediction(ctx, principal, params.id)));
  }

  async function cancel({ principal, params }: ById) {
    return jsonResponse(JSON.stringify(await cancelPrediction(ctx, principal, params.id)));
  }

  async function list({
    principal,
    query,
  }: {
    principal: Principal;
    query: { limit?: string; cursor?: string };
  }) {
    const { limit, cursor } = paging(query, idCursor(UUID));
    const page = await listPredictions(ctx, principal.accountId, {
      limit,
      before: cursor,
      explicitLimit: query.limit !== undefined,
    });
    return jsonResponse(JSON.stringify(page));
  }

  const created = { 201: PredictionSchema, ...problems(400, 401, 402, 409, 429, 503) };
  async function stream({
    params,
    query,
    request,
  }: {
    params: { id: string };
    query: StreamQuery;
    request: Request;
  }) {
    return predictionStream(ctx, await streamedJob(ctx, params.id, query), request.signal);
  }

  return (
    new Elysia({ prefix: "/v1", detail: { tags: ["Replicate"], security: [{ apiKey: [] }] } })
      // Before the key: replicate.stream() reads urls.stream without it; the signed link is the capability.
      .get("/predictions/:id/stream", stream, {
        params: IdParams,
        query: StreamQuery,
        detail: OPENAPI.stream,
        response: problems(400, 403, 404, 410),
      })
      .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
      .post("/models/:owner/:name/predictions", create, {
        body: PredictionBody,
        detail: OPENAPI.createOfModel,
        response: created,
      })
      .post("/predictions", create, {
        body: PredictionBody,
        detail: OPENAPI.create,
        response: created,
      })
      .get("/predictions", list, {
        query: t.Object(PagingQuery),
        detail: OPENAPI.list,
        response: { 200: PredictionPageSchema, ...problems(400, 401) },
      })
      .get("/predictions/:id", get, {
        params: IdParams,
        detail: OPENAPI.get,
        response: { 200: PredictionSchema, ...problems(400, 401, 404) },
      })
      .post("/predictions/:id/cancel", cancel, {
        params: IdParams,
        detail: OPENAPI.cancel,
        response: { 200: PredictionSchema, ...problems(400, 401, 404, 409) },
      })
      .get(
        "/webhooks/default/secret",
        async ({ principal }) => ({ key: await ctx.webhookSecrets.get(principal.accountId) }),
        {
          detail: OPENAPI.secret,
          response: { 200: t.Object({ key: t.String() }), ...problems(401) },
        },
      )
  );
}
