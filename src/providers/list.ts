import { cogProvider } from "./cog/descriptor.ts";
import { comfyuiProvider } from "./comfyui/descriptor.ts";
import type { ProviderDescriptor } from "./descriptor.ts";
import { falProvider } from "./fal/descriptor.ts";
import { openaiProvider } from "./openai/descriptor.ts";
import { replicateProvider } from "./replicate/descriptor.ts";
import { sandboxProvider } from "./sandbox/descriptor.ts";

/**
 * Every provider type, the one list the config schema, the catalog, start-up and the registry
 * read. A new provider is its folder plus one entry here (docs/providers/adding-a-provider.md).
 * Loading this list loads no adapter: descriptors load theirs when `create` is first called.
 */
export const PROVIDER_TYPES: readonly ProviderDescriptor[] = [
  sandboxProvider,
  openaiProvider,
  falProvider,
  replicateProvider,
  comfyuiProvider,
  cogProvider,
];

/** The descriptor of a provider type, or undefined. */
export function providerType(type: string): ProviderDescriptor | undefined {
  return PROVIDER_TYPES.find((d) => d.type === type);
}

/** The types an operator can configure under [providers.<name>] (all but the built-in sandbox). */
export const CONFIGURABLE_TYPES = PROVIDER_TYPES.filter((d) => !d.builtIn);
