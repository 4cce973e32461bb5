import { KINDS } from "../../lib/kinds.ts";
import type { ProviderDescriptor } from "../descriptor.ts";

type Media = typeof import("./provider.ts");
type Chat = typeof import("./chat.ts");

/** The built-in provider: in-process media and chat, always available as "sandbox". */
export const sandboxProvider: ProviderDescriptor = {
  type: "sandbox",
  builtIn: true,
  description: "sandbox: the built-in in-process provider",
  kinds: KINDS,
  config: {},
  create: () => new (require("./provider.ts") as Media).SandboxProvider(),
  createChat: () => new (require("./chat.ts") as Chat).SandboxChatProvider(),
};
