import { checkModelAllowed, type ModelAccess } from "../catalog/access.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";
import type { CircuitBreaker } from "../providers/circuit.ts";
import { pickRoute, type RandomSource, withRoute } from "../providers/routes.ts";

/**
 * Where a door finds its model: the catalog (replaced whole on reload, so read through the deps at
 * each request) and the upstreams' circuit breakers.
 */
export interface ModelDeps {
  catalog: Pick<Catalog, "get">;
  circuits: Map<string, CircuitBreaker>;
  /** The draw of weighted routing (Math.random when absent; seeded in tests). */
  routeRandom?: RandomSource;
}

/**
 * The model of a media door (the queue, /run, the studio's runs, OpenAI's images and speech): an
 * unknown id is 400 unknown_model, a text model 400 use_chat_completions (`param`: the door's name
 * of the model field). The model comes back on the route its job starts on (pickRoute); 503 when
 * every route's circuit is open, before anything is validated deeper or reserved.
 */
export function resolveMediaModel(
  deps: ModelDeps,
  modelId: string,
  access: ModelAccess,
  param = "model_id",
): Model {
  checkModelAllowed(access, modelId, param);
  const model = deps.catalog.get(modelId);
  if (!model) {
    throw new DomainError("unknown_model", `Model "${modelId}" is not in the catalog; see GET /v1/models.`, {
      param,
    });
  }
  if (model.kind === "text") {
    throw new DomainError(
      "use_chat_completions",
      `${modelId} is a text model: call POST /v1/chat/completions.`,
      { param },
    );
  }
  return checkCircuit(deps, model);
}

/**
 * The model of a text door (chat completions, the studio's chats): anything but a text model of
 * the catalog is 400 unknown_model (param `model`); an open circuit is 503.
 */
export function resolveTextModel(deps: ModelDeps, modelId: string, access: ModelAccess): Model {
  checkModelAllowed(access, modelId);
  const model = deps.catalog.get(modelId);
  if (model?.kind !== "text") {
    // A media model names its door: the queue (the client doors' own media routes map onto it).
    const door = model
      ? ` it is ${articled(model.kind)} model: submit it with POST /v1/queue/${modelId}`
      : "";
    throw new DomainError(
      "unknown_model",
      `"${modelId}" is not a text model of the catalog;${door || " see GET /v1/models"}.`,
      { param: "model" },
    );
  }
  return checkCircuit(deps, model);
}

function articled(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/**
 * The model on the route its job or call starts on: 503 capacity_unavailable only while every
 * route's circuit is open (the built-in sandbox has none).
 */
function checkCircuit(deps: ModelDeps, model: Model): Model {
  return withRoute(model, pickRoute(model, deps.circuits, deps.routeRandom));
}
