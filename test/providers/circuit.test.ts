import { describe, expect, test } from "bun:test";
import { errorHeaders } from "../../src/http/errors.ts";
import type { DomainError } from "../../src/lib/errors.ts";
import { CircuitBreaker, circuitFor, GuardedProvider } from "../../src/providers/circuit.ts";
import { type Provider, ProviderError, type ProviderJob } from "../../src/providers/types.ts";
import { redact, upstreamMessage } from "../../src/providers/upstream-client.ts";
import { json, makeTestApp } from "../helpers/context.ts";

describe("circuit breaker", () => {
  test("opens after consecutive failures, refuses with Retry-After, half-opens after the cooldown", () => {
    let now = 0;
    const c = new CircuitBreaker("p", { threshold: 3, cooldownMs: 10_000, now: () => now });
    c.failure();
    c.failure();
    expect(() => c.check()).not.toThrow();
    c.failure();
    expect(c.view()).toMatchObject({ state: "open", healthy: false });
    let err: DomainError | null = null;
    try {
      c.check();
    } catch (e) {
      err = e as DomainError;
    }
    expect(err?.code).toBe("capacity_unavailable");
    expect(err ? errorHeaders(err)["retry-after"] : undefined).toBe("10");
    now = 10_001;
    expect(() => c.check()).not.toThrow(); // half-open: one trial
    c.failure();
    expect(c.view().state).toBe("open"); // the trial failed: open again
    now = 20_002;
    c.check();
    c.success();
    expect(c.view()).toMatchObject({ state: "closed", consecutive_failures: 0, healthy: true });
  });

  test("a success resets the count; refused inputs do not count as failures", async () => {
    const c = new CircuitBreaker("p", { threshold: 2, cooldownMs: 1000 });
    const outcomes: (Error | null)[] = [
      new ProviderError("capacity", "busy"),
      null,
      new ProviderError("input", "bad prompt"),
      new ProviderError("failed", "500"),
    ];
    const inner: Provider = {
      name: "p",
      resumable: () => false,
      run: async () => {
        const o = outcomes.shift();
        if (o) throw o;
        return { outputs: [] };
      },
    };
    const guarded = new GuardedProvider(inner, c);
    const job = { signal: new AbortController().signal } as ProviderJob;
    for (let i = 0; i < 4; i++) await guarded.run(job).catch(() => {});
    expect(c.view()).toMatchObject({ state: "closed", consecutive_failures: 1 });
  });

  test("an open circuit refuses submits to its models with 503 and reserves nothing; /readyz shows it", async () => {
    const t = await makeTestApp({
      providers: { up: { type: "openai", base_url: "http://127.0.0.1:9" } },
      models: [{ id: "up/img", kind: "image", provider: "up", price_usd_micro: 10, max: 2 }],
    });
    await t.ctx.ledger.topUp(t.account.id, 1_000_000n, null);
    const circuit = circuitFor(t.ctx.circuits, "up");
    for (let i = 0; i < 5; i++) circuit.failure();
    const res = await t.request("/v1/queue/up/img", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"prompt":"x"}',
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("capacity_unavailable");
    expect((await t.ctx.accounts.getAccount(t.account.id))!.held_micro).toBe(0n);
    const ready = await json<{ providers: Record<string, { healthy: boolean; state: string }> }>(
      await t.request("/readyz", { key: null }),
    );
    expect(ready.providers.up).toMatchObject({ healthy: false, state: "open" });
    // The sandbox is unaffected.
    expect(
      (
        await t.request("/v1/queue/sandbox/image", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"prompt":"x"}',
        })
      ).status,
    ).toBe(202);
  });
});

describe("upstream error text", () => {
  test("keys are redacted and common error bodies summarised", () => {
    expect(redact("failed with key sk-123 in it, sk-123 again", "sk-123")).toBe(
      "failed with key [redacted] in it, [redacted] again",
    );
    expect(upstreamMessage('{"error":{"message":"quota exceeded"}}')).toBe(": quota exceeded");
    expect(upstreamMessage('{"detail":"Invalid version"}')).toBe(": Invalid version");
    expect(upstreamMessage("<html>")).toBe("");
  });
});
