import { describe, expect, test } from "bun:test";
import { liveFromConfig } from "../../src/app/app-context.ts";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { CircuitBreaker } from "../../src/providers/circuit.ts";
import { pickRoute } from "../../src/providers/routes.ts";

/** Every routes error names the model and the route, so an operator fixes the file without guessing. */
const image = (extra: Record<string, unknown>) => ({
  id: "acme/img",
  kind: "image",
  price_usd_micro: 100,
  max: 1,
  ...extra,
});
const fails = (models: unknown[], message: string) => expect(() => buildCatalog(models)).toThrow(message);

describe("routes config errors", () => {
  test("a route's unknown provider names the model, the route and the provider", () => {
    fails(
      [image({ routes: [{ provider: "sandbox" }, { provider: "nowhere" }] })],
      'models[0] (acme/img).routes[1] (nowhere).provider: no provider "nowhere"',
    );
  });

  test("routes beside the single-route keys is refused", () => {
    fails(
      [image({ provider: "sandbox", routes: [{ provider: "sandbox" }] })],
      "models[0] (acme/img).provider: write it in each of routes",
    );
    fails(
      [image({ cost_usd_micro: 1, routes: [{ provider: "sandbox" }] })],
      "models[0] (acme/img).cost_usd_micro",
    );
  });

  test("weighted routing without routes is refused", () => {
    fails([image({ routing: "weighted" })], "models[0] (acme/img).routing: weighted routing needs routes");
  });

  test("an unknown routing, an empty route list, a bad weight or an unknown route key", () => {
    fails([image({ routing: "random" })], "models[0] (acme/img).routing");
    fails([image({ routes: [] })], "models[0] (acme/img).routes");
    fails([image({ routes: [{ provider: "sandbox", weight: 0 }] })], "models[0] (acme/img).routes.0.weight");
    fails([image({ routes: [{ provider: "sandbox", price: 1 }] })], "models[0] (acme/img).routes.0");
    fails([image({ routes: [{ provider: "sandbox", cost_usd_micro: -1 }] })], "routes.0.cost_usd_micro");
  });

  test("a media route with text costs, a text route with a media cost, or half a text cost", () => {
    fails(
      [image({ routes: [{ provider: "sandbox", cost_input_usd_micro: 1 }] })],
      "models[0] (acme/img).routes[0] (sandbox).cost_input_usd_micro: only text routes take this field",
    );
    const text = {
      id: "acme/t",
      kind: "text",
      input_price_usd_micro: 1,
      output_price_usd_micro: 1,
      context: 10,
    };
    fails(
      [{ ...text, routes: [{ provider: "sandbox", cost_usd_micro: 1 }] }],
      "models[0] (acme/t).routes[0] (sandbox).cost_usd_micro: text routes cost per 1M tokens",
    );
    fails([{ ...text, cost_input_usd_micro: 1 }], "models[0] (acme/t).cost_input_usd_micro: give both");
  });

  test("a route on a provider whose type does not serve the kind names the route", () => {
    const config = {
      providers: { oa: { type: "openai", base_url: "http://127.0.0.1:9" } },
      models: [
        {
          id: "acme/vid",
          kind: "video",
          price_usd_micro: 1,
          max: 1,
          routes: [{ provider: "sandbox" }, { provider: "oa" }],
        },
      ],
    } as unknown as ConfigFile;
    expect(() => liveFromConfig(config)).toThrow(
      "models[0] (acme/vid).routes[1] (oa).provider: a openai provider does not serve video models",
    );
  });

  test("every route's circuit open: 503 capacity_unavailable with a Retry-After", () => {
    const m = buildCatalog([image({ routes: [{ provider: "sandbox" }] })]).get("acme/img")!;
    const two = {
      ...m,
      routes: [
        { ...m.routes[0]!, provider: "a" },
        { ...m.routes[0]!, provider: "b" },
      ],
    };
    const circuits = new Map<string, CircuitBreaker>();
    for (const name of ["a", "b"]) {
      const c = new CircuitBreaker(name, { threshold: 1, cooldownMs: 60_000 });
      c.failure();
      circuits.set(name, c);
    }
    let err: { code?: string; retryAfterSeconds?: number } = {};
    try {
      pickRoute(two, circuits);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe("capacity_unavailable");
  });
});
