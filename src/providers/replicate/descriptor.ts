import type { ProviderDescriptor } from "../descriptor.ts";

type Adapter = typeof import("./index.ts");

/** Replicate's predictions API. See docs/providers/replicate.md. */
export const replicateProvider: ProviderDescriptor = {
  type: "replicate",
  description: "replicate",
  kinds: ["video", "image", "avatar", "upscale", "audio"],
  config: {},
  create: (name, cfg) => (require("./index.ts") as Adapter).createReplicateProvider(name, cfg),
};
