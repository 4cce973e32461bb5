import { describe, expect, test } from "bun:test";
import { circuitFor, GuardedChatProvider, GuardedProvider } from "../../src/providers/circuit.ts";
import { type Provider, ProviderError, type ProviderJob } from "../../src/providers/types.ts";
import { ADMIN_TOKEN, json, makeTestApp } from "../helpers/context.ts";
import { parseExposition, sampleValue } from "../metrics/parse.ts";
import { admin } from "./helpers.ts";

type Health = {
  name: string;
  state: string;
  recent_calls: number;
  recent_errors: number;
  error_rate: number | null;
  latency_p50_ms: number | null;
};

/** A stand-in adapter: each run takes `ms` and ends as told (the wrapper is what measures). */
function stub(outcomes: { ms: number; error?: Error }[]): Provider {
  return {
    name: "up",
    resumable: () => false,
    run: async () => {
      const o = outcomes.shift()!;
      await Bun.sleep(o.ms);
      if (o.error) throw o.error;
      return { outputs: [] };
    },
  };
}

describe("health per provider", () => {
  test("after stubbed successes and failures: error rate and median latency in the API and /metrics", async () => {
    const t = await makeTestApp({
      providers: {
        up: { type: "openai", base_url: "http://127.0.0.1:9" },
        idle: { type: "openai", base_url: "http://127.0.0.1:9" },
      },
    });
    const circuit = circuitFor(t.ctx.circuits, "up");
    // Three successes of ~60 ms, a refused input (an answer, not a failure), two upstream failures.
    const guarded = new GuardedProvider(
      stub([
        { ms: 60 },
        { ms: 60 },
        { ms: 60 },
        { ms: 60, error: new ProviderError("input", "bad prompt") },
        { ms: 0, error: new ProviderError("failed", "500") },
        { ms: 0, error: new ProviderError("capacity", "busy") },
      ]),
      circuit,
    );
    const job = { signal: new AbortController().signal } as ProviderJob;
    for (let i = 0; i < 6; i++) await guarded.run(job).catch(() => {});
    // An aborted run (time limit, shutdown) is not counted.
    const aborted = new AbortController();
    aborted.abort();
    await new GuardedProvider(stub([{ ms: 0, error: new Error("aborted") }]), circuit)
      .run({ signal: aborted.signal } as ProviderJob)
      .catch(() => {});

    const res = await t.request("/admin/v1/providers", admin("GET"));
    const rows = (await json<{ data: Health[] }>(res)).data;
    const up = rows.find((r) => r.name === "up")!;
    expect(up).toMatchObject({ state: "closed", recent_calls: 6, recent_errors: 2, error_rate: 2 / 6 });
    // Median of 60, 60, 60, 60, 0, 0 -> 60 (the timer's jitter allowed).
    expect(up.latency_p50_ms).toBeGreaterThanOrEqual(55);
    expect(up.latency_p50_ms).toBeLessThan(1000);
    expect(rows.find((r) => r.name === "idle")).toMatchObject({
      recent_calls: 0,
      error_rate: null,
      latency_p50_ms: null,
    });

    const metrics = await t.request("/metrics", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const f = parseExposition(await metrics.text());
    expect(sampleValue(f, "gengate_provider_recent_calls", { provider: "up" })).toBe(6);
    expect(sampleValue(f, "gengate_provider_error_ratio", { provider: "up" })).toBeCloseTo(1 / 3, 6);
    expect(sampleValue(f, "gengate_provider_latency_p50_seconds", { provider: "up" })).toBeCloseTo(
      up.latency_p50_ms! / 1000,
      6,
    );
    expect(sampleValue(f, "gengate_provider_recent_calls", { provider: "idle" })).toBe(0);
    expect(sampleValue(f, "gengate_provider_error_ratio", { provider: "idle" })).toBeUndefined();
  });

  test("chat calls count to the first piece; a failure before it is an error", async () => {
    const t = await makeTestApp({ providers: { up: { type: "openai", base_url: "http://127.0.0.1:9" } } });
    const circuit = circuitFor(t.ctx.circuits, "up");
    let fail = false;
    const chat = new GuardedChatProvider(
      {
        name: "up",
        async *chat() {
          await Bun.sleep(20);
          if (fail) throw new ProviderError("failed", "502");
          yield { content: "a" } as never;
          await Bun.sleep(200); // after the first piece: not part of the latency
          yield { content: "b" } as never;
        },
      },
      circuit,
    );
    const call = { signal: new AbortController().signal } as never;
    for await (const _ of chat.chat(call));
    fail = true;
    await (async () => {
      for await (const _ of chat.chat(call));
    })().catch(() => {});
    const v = circuit.stats.view();
    expect(v).toMatchObject({ recent_calls: 2, recent_errors: 1, error_rate: 0.5 });
    expect(v.latency_p50_ms).toBeLessThan(150);
  });
});
