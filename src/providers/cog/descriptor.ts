import type { ProviderDescriptor } from "../descriptor.ts";

type Adapter = typeof import("./provider.ts");

/**
 * A cog server: one Replicate model container the operator runs (one model per server; a model's
 * `upstream_model` is ignored). Predictions are created with a webhook the gateway serves. See
 * docs/providers.md "cog".
 */
export const cogProvider: ProviderDescriptor = {
  type: "cog",
  description: "cog: one cog model server (a Replicate model container)",
  kinds: ["video", "image", "avatar", "upscale", "audio"],
  config: {},
  create: (name, cfg) => (require("./provider.ts") as Adapter).createCogProvider(name, cfg),
};
