import type { LiveSettings, ProviderSettings } from "../config/schema.ts";
import { ShutdownError } from "../queue/workers.ts";
import { CircuitBreaker, GuardedProvider } from "./circuit.ts";
import { createComfyProvider } from "./comfyui/index.ts";
import { createFalProvider } from "./fal/index.ts";
import { OpenAIMediaProvider } from "./openai/media.ts";
import { createReplicateProvider } from "./replicate/index.ts";
import { SandboxProvider } from "./sandbox/provider.ts";
import type { Provider } from "./types.ts";

type Factory = (name: string, cfg: ProviderSettings) => Provider;

/** Media adapters by provider type (text models of "openai" providers use the chat path). */
const FACTORIES: Partial<Record<ProviderSettings["type"], Factory>> = {
  openai: (name, cfg) => new OpenAIMediaProvider(name, cfg),
  // At shutdown a prompt is left running so the next start resumes it; a time limit cancels it.
  fal: (name, cfg) =>
    createFalProvider(name, cfg, { cancelOnAbort: (reason) => !(reason instanceof ShutdownError) }),
  replicate: (name, cfg) => createReplicateProvider(name, cfg),
  comfyui: (name, cfg) =>
    createComfyProvider(name, cfg, { cancelOnAbort: (reason) => !(reason instanceof ShutdownError) }),
};

/** Model kinds each provider type can serve; checked when the catalog loads. */
export const KINDS_BY_PROVIDER_TYPE: Record<ProviderSettings["type"], readonly string[]> = {
  openai: ["text", "image", "upscale", "audio"],
  fal: ["video", "image", "avatar", "upscale", "audio"],
  replicate: ["video", "image", "avatar", "upscale", "audio"],
  comfyui: ["video", "image", "avatar", "upscale", "audio"],
};

/**
 * The providers the workers run jobs on, refilled in place on reload (the worker pool holds this
 * Map). Every upstream provider is wrapped in its circuit breaker; circuits outlive reloads.
 */
export function fillProviders(
  target: Map<string, Provider>,
  live: LiveSettings,
  circuits: Map<string, CircuitBreaker>,
): void {
  target.clear();
  target.set("sandbox", new SandboxProvider());
  for (const [name, cfg] of Object.entries(live.providers)) {
    const factory = FACTORIES[cfg.type];
    if (!factory) continue;
    let circuit = circuits.get(name);
    if (!circuit) {
      circuit = new CircuitBreaker(name);
      circuits.set(name, circuit);
    }
    target.set(name, new GuardedProvider(factory(name, cfg), circuit));
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
