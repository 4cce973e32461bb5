import type { ProviderDescriptor } from "../descriptor.ts";

type Media = typeof import("./media.ts");
type Chat = typeof import("./chat.ts");

/** Any OpenAI-compatible server: chat completions, images and speech. */
export const openaiProvider: ProviderDescriptor = {
  type: "openai",
  description: "openai: any OpenAI-compatible server",
  kinds: ["text", "image", "upscale", "audio"],
  config: {},
  create: (name, cfg) => new (require("./media.ts") as Media).OpenAIMediaProvider(name, cfg),
  createChat: (name, cfg) => new (require("./chat.ts") as Chat).OpenAIChatProvider(name, cfg),
};
