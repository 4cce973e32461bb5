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

/** Each configured provider as the operator sees it: type, address, models and circuit (never keys). */
export function providerHealth(deps: ProviderHealthDeps) {
  return Object.entries(deps.live.providers).map(([name, p]) => ({
    name,
    type: p.type,
    base_url: p.baseUrl,
    models: deps.catalog.models.filter((m) => m.routes.some((r) => r.provider === name)).map((m) => m.id),
    ...circuitFor(deps.circuits, name).view(),
  }));
}
