import type { ProviderDescriptor } from "../descriptor.ts";

type Adapter = typeof import("./index.ts");

/** fal's queue API (queue.fal.run). See docs/providers/fal.md. */
export const falProvider: ProviderDescriptor = {
  type: "fal",
  description: "fal",
  kinds: ["video", "image", "avatar", "upscale", "audio"],
  config: {},
  create: (name, cfg) => (require("./index.ts") as Adapter).createFalProvider(name, cfg),
};
