import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { jsonResponse } from "../http/schemas.ts";
import { claimOf, REPLAYED_HEADER } from "../idempotency/idempotency.ts";
import { apiOpener } from "../jobs/open.ts";
import { UUID_PATTERN as UUID } from "../lib/ids.ts";
import type { AppContext } from "../server/context.ts";
import {
  cancelPrediction,
  createPrediction,
  getPrediction,
  listPredictions,
  preferWait,
} from "./predictions.ts";
import { PredictionBody, PredictionPageSchema, PredictionSchema, problems } from "./schemas.ts";

type Create = {
  principal: Principal;
  request: Request;
  body: typeof PredictionBody.static;
  params?: { owner?: string; name?: string };
};
type ById = { principal: Principal; params: { id: string } };

const IdParams = t.Object({ id: t.String({ description: "The prediction id: a request id (UUID)." }) });
const WAIT = {
  name: "Prefer",
  in: "header",
  required: false,
  schema: { type: "string" as const, examples: ["wait", "wait=5"] },
  description: "wait[=n]: answer when the prediction ends or after n seconds (1 to 60, default 60).",
};
const IDEMPOTENCY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string" as const },
};

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
  return new Elysia({ prefix: "/v1", detail: { tags: ["Replicate"], security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post("/models/:owner/:name/predictions", create, {
      body: PredictionBody,
      detail: {
        summary: "Create a prediction of a model (Replicate)",
        description:
          "Replicate's create: opens one queue job of the catalog model owner/name with `input` (held and priced as POST /v1/queue). Prefer: wait[=n] holds the answer until the job ends or n seconds. 201 with the prediction.",
        parameters: [WAIT, IDEMPOTENCY],
      },
      response: created,
    })
    .post("/predictions", create, {
      body: PredictionBody,
      detail: {
        summary: "Create a prediction (Replicate)",
        description: "As POST /v1/models/{owner}/{name}/predictions, the model named by `version`.",
        parameters: [WAIT, IDEMPOTENCY],
      },
      response: created,
    })
    .get("/predictions", list, {
      query: t.Object(PagingQuery),
      detail: {
        summary: "List predictions (Replicate)",
        description:
          "The account's jobs, newest first, as predictions without logs; `next` is the next page's URL.",
      },
      response: { 200: PredictionPageSchema, ...problems(400, 401) },
    })
    .get("/predictions/:id", get, {
      params: IdParams,
      detail: {
        summary: "Get a prediction (Replicate)",
        description: "The job as a prediction, with fresh signed output links.",
      },
      response: { 200: PredictionSchema, ...problems(400, 401, 404) },
    })
    .post("/predictions/:id/cancel", cancel, {
      params: IdParams,
      detail: {
        summary: "Cancel a prediction (Replicate)",
        description:
          "A starting (queued) prediction is canceled and its hold released; an ended one is answered as it is; a processing one is 409 not_cancellable.",
      },
      response: { 200: PredictionSchema, ...problems(400, 401, 404, 409) },
    })
    .get(
      "/webhooks/default/secret",
      async ({ principal }) => ({ key: await ctx.webhookSecrets.get(principal.accountId) }),
      {
        detail: {
          summary: "Get the webhook signing secret (Replicate)",
          description:
            "The account's whsec_ secret as Replicate's client reads it (`key`); the same as GET /v1/account/webhook-secret.",
        },
        response: { 200: t.Object({ key: t.String() }), ...problems(401) },
      },
    );
}
