import { Elysia, t } from "elysia";
import { fxView } from "../fx/store.ts";
import { errors } from "../http/schemas.ts";
import { type OperatorDeps, setFxRate } from "./operations.ts";
import { type ProviderHealthDeps, providerHealth } from "./providers.ts";
import { FxSchema } from "./schemas.ts";

const ProviderSchema = t.Object({
  name: t.String(),
  type: t.String(),
  base_url: t.String(),
  models: t.Array(t.String()),
  state: t.String(),
  consecutive_failures: t.Integer(),
  healthy: t.Boolean(),
  recent_calls: t.Integer({
    description: "Calls that ended in the last 15 minutes on this instance (at most 1000).",
  }),
  recent_errors: t.Integer({
    description: "Of those, upstream failures (a refused input is an answer, not a failure).",
  }),
  error_rate: t.Union([t.Number(), t.Null()], {
    description: "recent_errors / recent_calls; null without calls.",
  }),
  latency_p50_ms: t.Union([t.Integer(), t.Null()], {
    description: "Median duration of those calls in ms (a media job's whole run; chat: to the first piece).",
  }),
});

/** Upstream providers' health and the exchange rates new reservations use. */
export function adminProviderRoutes(deps: ProviderHealthDeps & OperatorDeps) {
  function providers() {
    return { data: providerHealth(deps) };
  }

  async function listFx() {
    return { data: (await deps.fx.list()).map(fxView) };
  }

  async function putFx({ params, body }: { params: { currency: string }; body: { rate: string } }) {
    return await setFxRate(deps, params.currency, body.rate, "admin");
  }

  return new Elysia()
    .get("/providers", providers, {
      detail: {
        summary: "List upstream providers",
        description:
          "Configuration (never keys) and health of each provider: its circuit, and its recent error rate and median latency on this instance.",
      },
      response: { 200: t.Object({ data: t.Array(ProviderSchema) }), ...errors(401) },
    })
    .get("/fx", listFx, {
      detail: { summary: "List exchange rates" },
      response: { 200: t.Object({ data: t.Array(FxSchema) }), ...errors(401) },
    })
    .put("/fx/:currency", putFx, {
      params: t.Object({ currency: t.String({ maxLength: 8 }) }),
      body: t.Object(
        { rate: t.String({ description: 'Units of the currency per 1 USD, e.g. "92.5".' }) },
        { additionalProperties: false },
      ),
      detail: {
        summary: "Set an exchange rate",
        description: "New reservations use it; open holds keep their rate.",
      },
      response: { 200: FxSchema, ...errors(400, 401) },
    });
}
