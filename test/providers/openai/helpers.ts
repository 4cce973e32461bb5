import { OpenAIMediaProvider } from "../../../src/providers/openai/media.ts";
import { startMockOpenAI } from "../../helpers/mock-openai.ts";
import { settlementHarness } from "../../queue/settlement-harness.ts";

/** The openai media adapter (provider "oa") pointed at `baseUrl`, as the registry would build it. */
export function openaiMediaProvider(baseUrl: string, name = "oa") {
  return new OpenAIMediaProvider(name, {
    type: "openai",
    baseUrl,
    apiKey: null,
    timeoutMs: 5000,
    concurrency: 2,
    pollIntervalMs: 20,
    workflows: {},
  });
}

/** An image model `oa/<name>` whose upstream model name picks the mock's behaviour. */
export const mockImageModel = (name: string, extra: Record<string, unknown> = {}) => ({
  id: `oa/${name}`,
  kind: "image",
  provider: "oa",
  upstream_model: name,
  price_usd_micro: 1000,
  max: 4,
  ...extra,
});

/** The mock OpenAI upstream and a settlement harness whose worker runs the openai media adapter on it. */
export async function openaiMediaHarness(models: unknown[]) {
  const mock = startMockOpenAI();
  const h = await settlementHarness({
    provider: openaiMediaProvider(mock.url),
    providerConfig: { type: "openai", base_url: mock.url },
    models,
  });
  return {
    mock,
    h,
    stop: async () => {
      await h.stop();
      mock.stop();
    },
  };
}
