import { Elysia, t } from "elysia";
import { errors } from "../http/schemas.ts";
import { operatorRequest } from "../queue/all-requests.ts";
import type { RequestStores } from "../queue/requests.ts";

const OperatorRequestSchema = t.Object({
  account_id: t.String(),
  route: t.Object({
    provider: t.String({ description: "The provider of the route the job runs or ran on." }),
    index: t.Integer({ description: "Its index in the model's routes (0 = the first)." }),
    cost_usd_micro: t.Union([t.String(), t.Null()], {
      description:
        "What the job cost upstream, micro-USD; null = unknown (no cost configured, failed, or not settled).",
    }),
  }),
  record: t.Record(t.String(), t.Unknown(), { description: "The request record, as its client reads it." }),
});

/** Any account's request with the route that ran it: the operator's view (clients never see a route). */
export function adminRequestRoutes(deps: Pick<RequestStores, "jobs" | "views">) {
  async function request({ params }: { params: { id: string } }) {
    return await operatorRequest(deps, params.id);
  }

  return new Elysia().get("/requests/:id", request, {
    params: t.Object({ id: t.String({ maxLength: 64 }) }),
    detail: {
      summary: "Get any request with its route",
      description:
        "The request record, its account, the route (provider and index) that ran it and its upstream cost.",
    },
    response: { 200: OperatorRequestSchema, ...errors(401, 404) },
  });
}
