import { Type as T } from "@sinclair/typebox";
import type { ProviderDescriptor } from "../descriptor.ts";
import { validateComfyModels } from "./validate.ts";

type Adapter = typeof import("./provider.ts");

/** A local ComfyUI server running the operator's workflow templates. See docs/providers/comfyui.md. */
export const comfyuiProvider: ProviderDescriptor = {
  type: "comfyui",
  description: "comfyui: a local ComfyUI server",
  kinds: ["video", "image", "avatar", "upscale", "audio"],
  config: {
    workflows: T.Optional(
      T.Record(T.String({ pattern: "^[A-Za-z0-9_.-]{1,64}$" }), T.Unknown(), {
        description:
          "comfyui: workflow templates (API format) by name; {{field}} placeholders are filled from the input.",
      }),
    ),
  },
  create: (name, cfg) => (require("./provider.ts") as Adapter).createComfyProvider(name, cfg),
  // Each model names a workflow whose placeholders all are input fields.
  validateModels: validateComfyModels,
};
