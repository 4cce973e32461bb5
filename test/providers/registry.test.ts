import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import type { Model } from "../../src/catalog/model.ts";
import { liveSettingsFrom } from "../../src/config/load.ts";
import { ConfigFile } from "../../src/config/schema.ts";
import { errorHeaders } from "../../src/http/errors.ts";
import { DomainError } from "../../src/lib/errors.ts";
import type { ChatCall, ChatDelta, ChatProvider } from "../../src/providers/chat.ts";
import {
  CircuitBreaker,
  circuitFor,
  GuardedChatProvider,
  GuardedProvider,
} from "../../src/providers/circuit.ts";
import { CONFIGURABLE_TYPES, PROVIDER_TYPES, providerType } from "../../src/providers/list.ts";
import { chatProviderFor, fillProviders, validateProviderModels } from "../../src/providers/registry.ts";
import { type Provider, ProviderError } from "../../src/providers/types.ts";

const live = (providers: Record<string, unknown>, models: unknown[] = []) =>
  liveSettingsFrom({ providers, models } as never, {});

describe("the provider list", () => {
  test("one descriptor per type; the sandbox is the only built-in", () => {
    const types = PROVIDER_TYPES.map((d) => d.type);
    expect(new Set(types).size).toBe(types.length);
    expect(PROVIDER_TYPES.filter((d) => d.builtIn).map((d) => d.type)).toEqual(["sandbox"]);
    expect(CONFIGURABLE_TYPES.map((d) => d.type).sort()).toEqual([
      "cog",
      "comfyui",
      "fal",
      "openai",
      "replicate",
    ]);
    expect(providerType("nope")).toBeUndefined();
  });

  test("the config schema accepts exactly the configurable types", () => {
    for (const d of CONFIGURABLE_TYPES)
      expect(Value.Check(ConfigFile, { providers: { p: { type: d.type, base_url: "http://x" } } })).toBe(
        true,
      );
    for (const type of ["sandbox", "bogus"])
      expect(Value.Check(ConfigFile, { providers: { p: { type, base_url: "http://x" } } })).toBe(false);
  });

  test("a type's own config keys reach its adapter in ProviderSettings.options", () => {
    const workflows = { flow: { "1": { class_type: "X", inputs: {} } } };
    const l = live({
      c: { type: "comfyui", base_url: "http://x", workflows },
      f: { type: "fal", base_url: "http://y" },
    });
    expect(l.providers.c!.options).toEqual({ workflows });
    expect(l.providers.f!.options).toEqual({});
  });

  test("the catalog refuses a model of a kind its provider type does not serve", () => {
    expect(() =>
      buildCatalog(
        [
          {
            id: "f/chat",
            kind: "text",
            provider: "f",
            input_price_usd_micro: 1,
            output_price_usd_micro: 1,
            context: 8,
          },
        ],
        { providers: { f: "fal" } },
      ),
    ).toThrow("a fal provider does not serve text models");
  });
});

describe("the registry", () => {
  test("fills the sandbox and one circuit-guarded adapter per configured provider", () => {
    const target = new Map<string, Provider>();
    const circuits = new Map<string, CircuitBreaker>();
    fillProviders(
      target,
      live({
        o: { type: "openai", base_url: "http://127.0.0.1:9" },
        f: { type: "fal", base_url: "http://127.0.0.1:9" },
        r: { type: "replicate", base_url: "http://127.0.0.1:9" },
        c: { type: "comfyui", base_url: "http://127.0.0.1:9" },
      }),
      circuits,
    );
    expect([...target.keys()].sort()).toEqual(["c", "f", "o", "r", "sandbox"]);
    expect(target.get("sandbox")).not.toBeInstanceOf(GuardedProvider);
    for (const name of ["c", "f", "o", "r"]) {
      expect(target.get(name)).toBeInstanceOf(GuardedProvider);
      expect(target.get(name)!.name).toBe(name);
    }
    expect([...circuits.keys()].sort()).toEqual(["c", "f", "o", "r"]);
    // A reload refills in place and keeps the circuits.
    const before = circuits.get("f");
    fillProviders(target, live({ f: { type: "fal", base_url: "http://127.0.0.1:9" } }), circuits);
    expect([...target.keys()].sort()).toEqual(["f", "sandbox"]);
    expect(circuits.get("f")).toBe(before!);
  });

  test("model checks of each type run at load (ComfyUI: the workflow must exist)", () => {
    const l = live({ c: { type: "comfyui", base_url: "http://x", workflows: {} } }, [
      { id: "local/sdxl", kind: "image", provider: "c", price_usd_micro: 1, max: 1, upstream_model: "sdxl" },
    ]);
    const catalog = buildCatalog(l.models, { providers: { c: "comfyui" } });
    expect(() => validateProviderModels(l, catalog)).toThrow(
      'models[0] (local/sdxl).upstream_model: no workflow "sdxl" in providers.c.workflows',
    );
  });
});

const textModel = (provider: string) =>
  ({ id: `${provider}/chat`, provider, routes: [{ provider }] }) as Model;

describe("chatProviderFor", () => {
  test("the sandbox chat is not guarded; a configured provider's chat is, and an open circuit refuses", () => {
    const circuits = new Map<string, CircuitBreaker>();
    const l = live({ o: { type: "openai", base_url: "http://127.0.0.1:9" } });
    const sandbox = chatProviderFor({ live: l, circuits }, textModel("sandbox"));
    expect(sandbox.name).toBe("sandbox");
    expect(sandbox).not.toBeInstanceOf(GuardedChatProvider);
    const o = chatProviderFor({ live: l, circuits }, textModel("o"));
    expect(o).toBeInstanceOf(GuardedChatProvider);
    expect(o.name).toBe("o");
    const circuit = circuitFor(circuits, "o");
    for (let i = 0; i < 5; i++) circuit.failure();
    let err: unknown;
    try {
      chatProviderFor({ live: l, circuits }, textModel("o"));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("capacity_unavailable");
    expect(errorHeaders(err as DomainError)["retry-after"]).toBeTruthy();
  });

  test("a provider that is not configured is 503 capacity_unavailable", () => {
    expect(() => chatProviderFor({ live: live({}), circuits: new Map() }, textModel("gone"))).toThrow(
      "The provider of gone/chat is not configured.",
    );
  });

  test("the first piece of a reply feeds the circuit; refused inputs and aborts do not count", async () => {
    const c = new CircuitBreaker("p", { threshold: 2, cooldownMs: 60_000 });
    const outcomes: (Error | "ok")[] = [
      new ProviderError("capacity", "busy"),
      "ok",
      new ProviderError("input", "bad"),
      new ProviderError("failed", "500"),
    ];
    const inner: ChatProvider = {
      name: "p",
      async *chat(): AsyncIterable<ChatDelta> {
        const o = outcomes.shift();
        if (o instanceof Error) throw o;
        yield { content: "a" };
        yield { content: "b", finishReason: "stop" };
      },
    };
    const guarded = new GuardedChatProvider(inner, c);
    const call = { signal: new AbortController().signal } as ChatCall;
    const replies: string[] = [];
    for (let i = 0; i < 4; i++) {
      try {
        let text = "";
        for await (const d of guarded.chat(call)) text += d.content;
        replies.push(text);
      } catch (err) {
        replies.push((err as Error).message);
      }
    }
    expect(replies).toEqual(["busy", "ab", "bad", "500"]);
    expect(c.view()).toMatchObject({ state: "closed", consecutive_failures: 1 });
    // An abort (client gone, time limit, shutdown) is not the upstream's fault.
    const aborted = new AbortController();
    aborted.abort(new Error("client disconnected"));
    outcomes.push(new Error("aborted"));
    await expect(
      (async () => {
        for await (const _ of guarded.chat({ signal: aborted.signal } as ChatCall));
      })(),
    ).rejects.toThrow("aborted");
    expect(c.view().consecutive_failures).toBe(1);
    outcomes.push(new ProviderError("failed", "500"));
    await expect(
      (async () => {
        for await (const _ of guarded.chat(call));
      })(),
    ).rejects.toThrow("500");
    expect(c.view()).toMatchObject({ state: "open", consecutive_failures: 2 });
  });
});
