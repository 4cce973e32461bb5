import { resolveModel } from "../../../src/catalog/catalog.ts";
import type { Model } from "../../../src/catalog/model.ts";
import type { ProviderSettings } from "../../../src/config/schema.ts";
import type { ProviderJob } from "../../../src/providers/types.ts";

export function settings(
  baseUrl: string,
  apiKey: string | null,
  over: Partial<ProviderSettings> = {},
): ProviderSettings {
  return {
    type: "fal",
    baseUrl,
    apiKey,
    timeoutMs: 2000,
    concurrency: 4,
    pollIntervalMs: 20,
    workflows: {},
    ...over,
  };
}

export function model(
  upstream: string,
  kind: Model["kind"] = "image",
  extra: Record<string, unknown> = {},
): Model {
  return resolveModel(
    {
      id: kind === "image" ? "fal-ai/flux/dev" : `fal-ai/test-${kind}`,
      kind,
      provider: "fal",
      upstream_model: upstream,
      price_usd_micro: 1,
      max: kind === "image" || kind === "upscale" ? 4 : 10,
      ...extra,
    },
    "test",
  );
}

export interface FakeJob extends ProviderJob {
  logs: string[];
  upstreamIds: string[];
  controller: AbortController;
}

export function fakeJob(
  m: Model,
  input: Record<string, unknown> = { prompt: "a cat" },
  over: {
    upstreamId?: string | null;
    onSetUpstreamId?: (id: string) => void;
    /** The job's log lines from earlier attempts (what the worker's priorLogs answers). */
    priorLogs?: string[];
  } = {},
): FakeJob {
  const controller = new AbortController();
  const logs: string[] = [];
  const upstreamIds: string[] = [];
  return {
    id: "req_test",
    model: m,
    input,
    attempt: 1,
    upstreamId: over.upstreamId ?? null,
    signal: controller.signal,
    controller,
    logs,
    upstreamIds,
    log: (message) => logs.push(message),
    ...(over.priorLogs ? { priorLogs: async () => [...over.priorLogs!] } : {}),
    setUpstreamId: async (id) => {
      upstreamIds.push(id);
      over.onSetUpstreamId?.(id);
    },
    // fal fetches its inputs itself: the gateway never reads one for it.
    readInput: () => Promise.reject(new Error("the fal provider reads no input file")),
  };
}

/** Runs and returns the rejection (fails the test if it resolves). */
export async function rejection(
  p: Promise<unknown>,
): Promise<Error & { kind?: string; retryAfterMs?: number }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { kind?: string };
  }
  throw new Error("expected the run to fail, but it succeeded");
}
