import type { Catalog } from "../catalog/catalog.ts";
import type { Model } from "../catalog/model.ts";
import type { LiveSettings, ProviderSettings } from "../config/schema.ts";
import { DomainError } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import type { ChatCall, ChatDelta, ChatProvider } from "./chat.ts";
import { type CircuitBreaker, circuitFor, GuardedChatProvider, GuardedProvider } from "./circuit.ts";
import { PROVIDER_TYPES, providerType } from "./list.ts";
import { withRoute } from "./routes.ts";
import { type Provider, ProviderError } from "./types.ts";

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

type ChatSource = { live: LiveSettings; circuits: Map<string, CircuitBreaker> };

/**
 * The chat provider of a text model on its route (`model.route`, as resolveTextModel picked it).
 * With several routes, a call its route refuses before the reply's first byte (ProviderError
 * `notAccepted`: refused connection, 429, 5xx; or the route's circuit open) goes to the next route,
 * in order, wrapping around, each route once; `onRoute` is told each move before that route is
 * asked. Never after the first byte: a reply that fails midway fails the call.
 */
export function chatProviderFor(
  src: ChatSource,
  model: Model,
  onRoute?: (route: number) => Promise<void>,
): ChatProvider {
  if (model.routes.length <= 1) return routeChat(src, model);
  return new FallbackChatProvider(src, model, onRoute);
}

class FallbackChatProvider implements ChatProvider {
  constructor(
    private readonly src: ChatSource,
    private readonly model: Model,
    private readonly onRoute?: (route: number) => Promise<void>,
  ) {}

  get name() {
    return this.model.provider;
  }

  async *chat(call: ChatCall): AsyncIterable<ChatDelta> {
    const n = this.model.routes.length;
    const start = this.model.route ?? 0;
    for (let k = 0; k < n; k++) {
      const index = (start + k) % n;
      const routed = withRoute(this.model, index);
      let provider: ChatProvider;
      try {
        provider = routeChat(this.src, routed);
      } catch (err) {
        if (err instanceof DomainError && err.code === "capacity_unavailable") continue; // circuit open
        throw err;
      }
      if (k > 0) await this.onRoute?.(index);
      const iterator = provider.chat({ ...call, model: routed })[Symbol.asyncIterator]();
      let first: IteratorResult<ChatDelta>;
      try {
        first = await iterator.next();
      } catch (err) {
        if (!(err instanceof ProviderError && err.notAccepted) || call.signal.aborted || k === n - 1)
          throw err;
        log("warn", "route refused the chat call before its first byte; next route", {
          model: this.model.id,
          from: routed.provider,
          status: err.status ?? null,
        });
        continue;
      }
      // The first byte came: from here the call stays on this route, whatever happens.
      for (let r = first; !r.done; r = await iterator.next()) yield r.value;
      return;
    }
    throw new ProviderError("capacity", "Every upstream of this model is unavailable.", {
      notAccepted: true,
    });
  }
}

/**
 * The chat provider of one route, wrapped in its provider's circuit breaker like the media
 * providers (the first piece of a reply feeds the circuit). Throws 503 capacity_unavailable, with
 * Retry-After, while that circuit is open or when the route's provider is not configured.
 */
function routeChat(src: ChatSource, model: Model): ChatProvider {
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
    // Each route on this provider is checked with its own upstream model.
    const entries = live.models.flatMap((raw, index) => {
      const m = catalog.get((raw as { id?: string }).id ?? "");
      return (m?.routes ?? [])
        .filter((r) => r.provider === name)
        .map((r) => ({ id: m!.id, upstream_model: r.upstream_model, input_schema: m!.input_schema, index }));
    });
    validate(name, cfg, entries);
  }
}
