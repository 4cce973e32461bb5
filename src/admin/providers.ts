import type { Catalog } from "../catalog/catalog.ts";
import type { LiveSettings } from "../config/schema.ts";
import type { CircuitBreaker } from "../providers/circuit.ts";
import { circuitFor } from "../providers/circuit.ts";

/** `live` and `catalog` are replaced whole on reload: read through this object at each call. */
export interface ProviderHealthDeps {
  live: Pick<LiveSettings, "providers">;
  catalog: Pick<Catalog, "models">;
  circuits: Map<string, CircuitBreaker>;
}

/**
 * Each configured provider as the operator sees it: type, address, models, circuit, and its recent
 * calls on this instance (error rate and median latency over the last 15 minutes: CallStats).
 */
export function providerHealth(deps: ProviderHealthDeps) {
  return Object.entries(deps.live.providers).map(([name, p]) => {
    const circuit = circuitFor(deps.circuits, name);
    return {
      name,
      type: p.type,
      base_url: p.baseUrl,
      models: deps.catalog.models.filter((m) => m.routes.some((r) => r.provider === name)).map((m) => m.id),
      ...circuit.view(),
      ...circuit.stats.view(),
    };
  });
}
