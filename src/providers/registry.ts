import type { Catalog } from "../catalog/catalog.ts";
import type { Model } from "../catalog/model.ts";
import type { LiveSettings, ProviderSettings } from "../config/schema.ts";
import { DomainError } from "../lib/errors.ts";
import type { ChatProvider } from "./chat.ts";
import { CircuitBreaker, GuardedChatProvider, GuardedProvider } from "./circuit.ts";
import { PROVIDER_TYPES, providerType } from "./list.ts";
import type { Provider } from "./types.ts";

/** The built-ins take no configuration; their create and createChat get these settings. */
const BUILT_IN_SETTINGS: ProviderSettings = {
  type: "sandbox",
  baseUrl: "",
  apiKey: null,
  timeoutMs: 0,
  concurrency: 1,
  pollIntervalMs: 0,
  workflows: {},
};

const builtInChats = new Map<string, ChatProvider>();

/**
 * The providers the workers run jobs on, refilled in place on reload (the worker pool holds this
 * Map): the built-in sandbox, then one adapter per configured provider, made by its type's
 * descriptor (src/providers/list.ts). Every upstream provider is wrapped in its circuit breaker;
 * circuits outlive reloads.
 */
export function fillProviders(
  target: Map<string, Provider>,
  live: LiveSettings,
  circuits: Map<string, CircuitBreaker>,
): void {
  target.clear();
  for (const d of PROVIDER_TYPES) if (d.builtIn) target.set(d.type, d.create(d.type, BUILT_IN_SETTINGS));
  for (const [name, cfg] of Object.entries(live.providers)) {
    const d = providerType(cfg.type);
    if (!d || d.builtIn) continue;
    target.set(name, new GuardedProvider(d.create(name, cfg), circuitFor(circuits, name)));
  }
}

export function circuitFor(circuits: Map<string, CircuitBreaker>, name: string): CircuitBreaker {
  let c = circuits.get(name);
  if (!c) {
    c = new CircuitBreaker(name);
    circuits.set(name, c);
  }
  return c;
}

/**
 * The chat provider of a text model, wrapped in its provider's circuit breaker like the media
 * providers (the first piece of a reply feeds the circuit). Throws 503 capacity_unavailable, with
 * Retry-After, while that circuit is open or when the model's provider is not configured.
 */
export function chatProviderFor(
  src: { live: LiveSettings; circuits: Map<string, CircuitBreaker> },
  model: Model,
): ChatProvider {
  const builtIn = providerType(model.provider);
  if (builtIn?.builtIn && builtIn.createChat) {
    let chat = builtInChats.get(model.provider);
    if (!chat) {
      chat = builtIn.createChat(model.provider, BUILT_IN_SETTINGS);
      builtInChats.set(model.provider, chat);
    }
    return chat;
  }
  const circuit = circuitFor(src.circuits, model.provider);
  circuit.check();
  const cfg = src.live.providers[model.provider];
  const create = cfg ? providerType(cfg.type)?.createChat : undefined;
  if (!cfg || !create)
    throw new DomainError("capacity_unavailable", `The provider of ${model.id} is not configured.`, {
      retryAfterSeconds: 60,
    });
  return new GuardedChatProvider(create(model.provider, cfg), circuit);
}

/**
 * Load-time checks of the catalog's models against their providers (each type's validateModels,
 * e.g. ComfyUI's workflows). Throws Error with a one-line message naming the entry.
 */
export function validateProviderModels(live: LiveSettings, catalog: Catalog): void {
  for (const [name, cfg] of Object.entries(live.providers)) {
    const validate = providerType(cfg.type)?.validateModels;
    if (!validate) continue;
    const entries = live.models.flatMap((raw, index) => {
      const m = catalog.get((raw as { id?: string }).id ?? "");
      return m && m.provider === name
        ? [{ id: m.id, upstream_model: m.upstream_model, input_schema: m.input_schema, index }]
        : [];
    });
    validate(name, cfg, entries);
  }
}
