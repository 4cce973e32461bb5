import type { TProperties } from "@sinclair/typebox";
import type { Kind } from "../catalog/model.ts";
import type { ProviderSettings } from "../config/schema.ts";
import type { ChatProvider } from "./chat.ts";
import type { Provider } from "./types.ts";

/** A configured model as a provider's load-time check sees it. */
export interface ConfiguredModel {
  id: string;
  upstream_model: string | null;
  input_schema: Record<string, unknown>;
  /** Position in the config's `models` list, for the message. */
  index: number;
}

/**
 * What a provider folder exports from its `descriptor.ts` (docs/providers/adding-a-provider.md).
 * The descriptor is metadata plus factories: it must not import its adapter at module level, so
 * that the catalog, the config schema and the CLI (which read every descriptor) load no adapter.
 * `create` loads the adapter module on first use (a `require` inside the function).
 */
export interface ProviderDescriptor {
  /** The `type` of a `[providers.<name>]` section (the built-in sandbox: its provider name). */
  readonly type: string;
  /** The sandbox only: always present under this name, never configured. */
  readonly builtIn?: boolean;
  /** One phrase for the config schema's description of `type`. */
  readonly description: string;
  /** Model kinds this type serves; a model of another kind on it is refused when the catalog loads. */
  readonly kinds: readonly Kind[];
  /**
   * The keys of a `[providers.<name>]` section this type adds to the common ones (base_url,
   * api_key_env, api_key_file, timeout_seconds, concurrency, poll_interval_ms), as TypeBox
   * properties (each T.Optional). load.ts passes their values on in ProviderSettings.options.
   */
  readonly config: TProperties;
  /** The media adapter for one configured provider (the registry wraps it in its circuit breaker). */
  create(name: string, cfg: ProviderSettings): Provider;
  /** The chat adapter, for types that serve text models. */
  createChat?(name: string, cfg: ProviderSettings): ChatProvider;
  /** Load-time check of the models this provider serves; throws Error with a one-line message. */
  validateModels?(name: string, cfg: ProviderSettings, models: ConfiguredModel[]): void;
}
