import { expect } from "bun:test";
import { resolveModel } from "../../../src/catalog/catalog.ts";
import type { Kind } from "../../../src/catalog/model.ts";
import type { ProviderSettings } from "../../../src/config/schema.ts";
import { createReplicateProvider } from "../../../src/providers/replicate/index.ts";
import { ProviderError, type ProviderJob, type ProviderResult } from "../../../src/providers/types.ts";
import { type MockReplicate, TOKEN } from "./mock-replicate.ts";

export interface Harness {
  job: ProviderJob;
  logs: string[];
  upstreamIds: { id: string; pollsSoFar: number }[];
  controller: AbortController;
}

/** Settings, models and fake jobs for running the Replicate adapter against a mock (started by the test file). */
export function replicateHarness(mockOf: () => MockReplicate) {
  const cfg = (over: Partial<ProviderSettings> = {}): ProviderSettings => ({
    type: "replicate",
    baseUrl: mockOf().url,
    apiKey: TOKEN,
    timeoutMs: 2000,
    concurrency: 2,
    pollIntervalMs: 20,
    workflows: {},
    ...over,
  });

  const PRICES: Record<Kind, Record<string, unknown>> = {
    image: { price_usd_micro: 3000, max: 4 },
    upscale: { price_usd_micro: 3000, max: 4, unit: "image" },
    video: { price_usd_micro: 100000, max: 10 },
    avatar: { price_usd_micro: 100000, max: 10 },
    audio: { price_usd_micro: 1000, max: 60 },
    text: {},
  };

  function model(upstream: string | undefined, kind: Kind = "image", extra: Record<string, unknown> = {}) {
    return resolveModel(
      {
        id: `replicate/test-${kind}`,
        kind,
        provider: "replicate",
        ...(upstream === undefined ? {} : { upstream_model: upstream }),
        ...PRICES[kind],
        ...extra,
      },
      "test",
    );
  }

  function makeJob(
    m: Awaited<ReturnType<typeof model>>,
    input: Record<string, unknown>,
    upstreamId: string | null = null,
  ): Harness {
    const controller = new AbortController();
    const logs: string[] = [];
    const upstreamIds: Harness["upstreamIds"] = [];
    const job: ProviderJob = {
      id: "req_test",
      model: m,
      input,
      attempt: 1,
      upstreamId,
      signal: controller.signal,
      log: (message) => logs.push(message),
      setUpstreamId: async (id) =>
        void upstreamIds.push({ id, pollsSoFar: mockOf().predictions.get(id)?.polls ?? -1 }),
      // Replicate fetches its inputs itself: the gateway never reads one for it.
      readInput: () => Promise.reject(new Error("the replicate provider reads no input file")),
    };
    return { job, logs, upstreamIds, controller };
  }

  async function runOk(h: Harness, settings = cfg()): Promise<ProviderResult> {
    return createReplicateProvider("replicate", settings).run(h.job);
  }

  async function runErr(h: Harness, settings = cfg()): Promise<ProviderError> {
    try {
      await createReplicateProvider("replicate", settings).run(h.job);
    } catch (err) {
      expect(err).toBeInstanceOf(ProviderError);
      return err as ProviderError;
    }
    throw new Error("run() resolved, expected a ProviderError");
  }
  return { cfg, model, makeJob, runOk, runErr };
}
