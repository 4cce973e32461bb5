import type { ModelConfig } from "./model.ts";

/**
 * The built-in catalog: one sandbox model per kind, served in-process by the sandbox provider,
 * so a fresh binary runs every flow with no upstream. Prices are realistic so billing is visible.
 */
export const SANDBOX_MODELS: ModelConfig[] = [
  {
    id: "sandbox/video",
    kind: "video",
    unit: "second",
    description:
      "Sandbox text/image-to-video: a playable WebM video of the requested length. Priced per second by tier.",
    resolutions: ["480p", "720p", "1080p"],
    resolution_prices_usd_micro: { "480p": 20_000, "720p": 40_000, "1080p": 80_000 },
    max: 10,
    default_units: 5,
    provider: "sandbox",
    time_limit_seconds: 600,
  },
  {
    id: "sandbox/image",
    kind: "image",
    unit: "image",
    description: "Sandbox text-to-image: PNG images of the requested size.",
    price_usd_micro: 10_000,
    max: 4,
    default_units: 1,
    provider: "sandbox",
    time_limit_seconds: 300,
  },
  {
    id: "sandbox/avatar",
    kind: "avatar",
    unit: "second",
    description:
      "Sandbox talking avatar: a WebM video of a talking head, lip-synced to the text, of the requested length.",
    price_usd_micro: 30_000,
    max: 60,
    default_units: 5,
    provider: "sandbox",
    time_limit_seconds: 600,
  },
  {
    id: "sandbox/upscale",
    kind: "upscale",
    unit: "megapixel",
    description: "Sandbox image upscaler, priced per output megapixel.",
    price_usd_micro: 2_000,
    max: 64,
    provider: "sandbox",
    time_limit_seconds: 300,
  },
  {
    id: "sandbox/speech",
    kind: "audio",
    unit: "second",
    description: "Sandbox text-to-speech: speech-like WAV audio of the requested duration.",
    price_usd_micro: 5_000,
    max: 300,
    default_units: 10,
    provider: "sandbox",
    time_limit_seconds: 300,
  },
  {
    id: "sandbox/chat",
    kind: "text",
    unit: "1M_tokens",
    description: "Sandbox chat model: deterministic answers with real token counts, streaming supported.",
    input_price_usd_micro: 500_000,
    output_price_usd_micro: 1_500_000,
    context: 32_768,
    provider: "sandbox",
    time_limit_seconds: 120,
  },
];
