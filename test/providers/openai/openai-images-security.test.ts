import { afterAll, describe, expect, test } from "bun:test";
import { OpenAIMediaProvider } from "../../../src/providers/openai/media.ts";
import { startMockOpenAI } from "../../helpers/mock-openai.ts";
import { settlementHarness } from "../../queue/settlement-harness.ts";

// An image link in an upstream's answer is fetched only under the outbound policy: the upstream's
// own origin, or a host whose every address is public. Anything else fails the job (hold released)
// and is never fetched, so an upstream cannot make the gateway read the operator's network.

const mock = startMockOpenAI();
const h = await settlementHarness({
  provider: new OpenAIMediaProvider("oa", {
    type: "openai",
    baseUrl: mock.url,
    apiKey: null,
    timeoutMs: 5000,
    concurrency: 2,
    pollIntervalMs: 20,
    workflows: {},
  }),
  providerConfig: { type: "openai", base_url: mock.url },
  models: ["link-metadata", "link-localhost"].map((name) => ({
    id: `oa/${name}`,
    kind: "image",
    provider: "oa",
    upstream_model: name,
    price_usd_micro: 1000,
    max: 4,
  })),
});
afterAll(async () => {
  await h.stop();
  mock.stop();
});

describe("openai image links: the outbound policy", () => {
  for (const [name, what] of [
    ["link-metadata", "the cloud metadata address"],
    ["link-localhost", "another origin on loopback"],
  ] as const) {
    test(`a link to ${what}: failed, nothing fetched or stored, nothing charged`, async () => {
      const r = await h.run(`oa/${name}`, { prompt: "x" });
      expect(r.status).toBe("FAILED");
      expect(r.error).toBe(
        "Image 0 of the upstream's answer links to a non-public address; it was not fetched.",
      );
      expect(r.files).toEqual([]);
      expect(r.charged).toBe(0n);
      expect(r.invariants).toEqual([]);
    });
  }
});
