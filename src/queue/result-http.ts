import { Elysia, t } from "elysia";
import type { Principal } from "../accounts/store.ts";
import { requirePrincipal } from "../auth/authenticate.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { cancelRequest, completedJob } from "./ownership.ts";
import { IdParams } from "./schemas.ts";

type ByIdRequest = { principal: Principal; params: { id: string } };
const Cancelled = t.Object({ request_id: t.String(), status: t.Literal("CANCELLED") });

/** GET /v1/requests/{id}/response and cancelling a request (POST, or PUT as fal clients send it). */
export function resultRoutes(ctx: AppContext) {
  async function response({ principal, params }: ByIdRequest) {
    const job = await completedJob(ctx, principal, params.id);
    return jsonResponse(JSON.stringify(await ctx.views.output(job)), 200, { "x-fal-request-id": job.id });
  }

  async function cancel({ principal, params }: ByIdRequest) {
    return await cancelRequest(ctx, principal, params.id);
  }

  return new Elysia()
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get("/requests/:id/response", response, {
      params: IdParams,
      detail: {
        summary: "Get a request's output",
        description: "The model output; media fields hold signed URLs reissued at every read.",
      },
      response: { 200: t.Record(t.String(), t.Unknown()), ...errors(400, 401, 404, 409) },
    })
    .post("/requests/:id/cancel", cancel, {
      params: IdParams,
      detail: {
        summary: "Cancel a request",
        description: "200 only while IN_QUEUE (the hold is released); 409 not_cancellable otherwise.",
      },
      response: { 200: Cancelled, ...errors(400, 401, 404, 409) },
    })
    .put("/requests/:id/cancel", cancel, {
      params: IdParams,
      detail: { summary: "Cancel a request (PUT)", description: "Same as POST." },
      response: { 200: Cancelled, ...errors(400, 401, 404, 409) },
    });
}
