import { describe, expect, test } from "bun:test";
import { liveFromConfig } from "../../src/app/app-context.ts";
import { buildCatalog, routeWarnings } from "../../src/catalog/catalog.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { CircuitBreaker } from "../../src/providers/circuit.ts";
import { firstRoute, nextRoute, pickRoute, seededRandom, withRoute } from "../../src/providers/routes.ts";
import { logLines } from "../helpers/logs.ts";

/** The reference config's model on three upstreams (docs/providers.md "Routes"), as TOML. */
const TOML = `
[providers.fal]
type = "fal"
base_url = "http://127.0.0.1:9"
[providers.replicate]
type = "replicate"
base_url = "http://127.0.0.1:9"
[providers.box]
type = "cog"
base_url = "http://127.0.0.1:9"

[[models]]
id = "acme/flux"
kind = "image"
price_usd_micro = 30000
max = 4
routing = "weighted"
routes = [
  { provider = "fal", upstream_model = "fal-ai/flux/dev", cost_usd_micro = 25000, weight = 3 },
  { provider = "replicate", upstream_model = "black-forest-labs/flux-dev", cost_usd_micro = 27000, input_map = { num_images = "num_outputs" } },
  { provider = "box", cost_usd_micro = 12000 },
]

[[models]]
id = "acme/single"
kind = "image"
provider = "fal"
upstream_model = "fal-ai/single"
input_map = { prompt = "text" }
cost_usd_micro = 800
price_usd_micro = 1000
max = 1
`;
const load = (toml: string) => liveFromConfig(Bun.TOML.parse(toml) as ConfigFile);

describe("routes in the config", () => {
  test("a model on three upstreams: each route with its own upstream model, input map, cost and weight", () => {
    const m = load(TOML).catalog.get("acme/flux")!;
    expect(m.routing).toBe("weighted");
    expect(m.routes.map((r) => [r.provider, r.upstream_model, r.cost_usd_micro, r.weight])).toEqual([
      ["fal", "fal-ai/flux/dev", 25000, 3],
      ["replicate", "black-forest-labs/flux-dev", 27000, 1],
      ["box", null, 12000, 1],
    ]);
    // The model as its adapter sees it on a route: that route's upstream model and input map only.
    expect(withRoute(m, 1)).toMatchObject({
      provider: "replicate",
      upstream_model: "black-forest-labs/flux-dev",
      input_map: { num_images: "num_outputs" },
      route: 1,
    });
    expect(withRoute(m, 0).input_map).toEqual({});
    // The catalog entry itself is on its first route, as before.
    expect(m).toMatchObject({ provider: "fal", upstream_model: "fal-ai/flux/dev" });
  });

  test("the single-route keys stay a shorthand for one route, cost included", () => {
    const m = load(TOML).catalog.get("acme/single")!;
    expect(m.routing).toBe("priority");
    expect(m.routes).toEqual([
      {
        provider: "fal",
        upstream_model: "fal-ai/single",
        input_map: { prompt: "text" },
        cost_usd_micro: 800,
        cost_input_usd_micro: null,
        cost_output_usd_micro: null,
        weight: 1,
      },
    ]);
  });

  test("a model without a cost has an unknown cost (null), not zero", () => {
    const m = buildCatalog([{ id: "a/b", kind: "image", price_usd_micro: 1, max: 1 }]).get("a/b")!;
    expect(m.routes[0]!.cost_usd_micro).toBeNull();
  });

  test("text routes cost per 1M input and output tokens", () => {
    const m = buildCatalog([
      {
        id: "a/t",
        kind: "text",
        input_price_usd_micro: 1000,
        output_price_usd_micro: 2000,
        context: 100,
        cost_input_usd_micro: 400,
        cost_output_usd_micro: 900,
      },
    ]).get("a/t")!;
    expect(m.routes[0]).toMatchObject({
      provider: "sandbox",
      cost_input_usd_micro: 400,
      cost_output_usd_micro: 900,
    });
  });

  test("a route costing more than the model's price is a load-time warning naming both", () => {
    const before = logLines.length;
    const c = buildCatalog([
      {
        id: "a/loss",
        kind: "image",
        price_usd_micro: 1000,
        max: 1,
        routes: [
          { provider: "sandbox", cost_usd_micro: 1001 },
          { provider: "sandbox", cost_usd_micro: 1000 },
        ],
      },
    ]);
    const expected = "a/loss route 0 (sandbox): unit cost 1001 is above the model's price 1000 (micro-USD)";
    expect(routeWarnings(c.get("a/loss")!)).toEqual([expected]);
    const warned = logLines.slice(before).map((l) => JSON.parse(l) as { level: string; warning?: string });
    expect(warned.filter((l) => l.warning === expected).map((l) => l.level)).toEqual(["warn"]);
  });

  test("a text route over either price is warned about", () => {
    const c = buildCatalog([
      {
        id: "a/t2",
        kind: "text",
        input_price_usd_micro: 1000,
        output_price_usd_micro: 2000,
        context: 100,
        cost_input_usd_micro: 999,
        cost_output_usd_micro: 2001,
      },
    ]);
    expect(routeWarnings(c.get("a/t2")!)).toEqual([
      "a/t2 route 0 (sandbox): output cost 2001 is above the model's price 2000 (micro-USD)",
    ]);
  });
});

describe("picking a route", () => {
  const model = load(TOML).catalog.get("acme/flux")!;
  const priority = { ...model, routing: "priority" as const };

  test("priority: the first route whose circuit is not open", () => {
    const circuits = new Map<string, CircuitBreaker>();
    expect(pickRoute(priority, circuits)).toBe(0);
    const fal = new CircuitBreaker("fal", { threshold: 1, cooldownMs: 60_000 });
    fal.failure();
    circuits.set("fal", fal);
    expect(pickRoute(priority, circuits)).toBe(1);
  });

  test("weighted: a seeded draw spreads 10,000 jobs by weight (3:1:1) within 2 points", () => {
    const random = seededRandom(35);
    const counts = [0, 0, 0];
    const N = 10_000;
    for (let i = 0; i < N; i++) counts[pickRoute(model, new Map(), random)]!++;
    const shares = counts.map((c) => c / N);
    expect(Math.abs(shares[0]! - 0.6)).toBeLessThan(0.02);
    expect(Math.abs(shares[1]! - 0.2)).toBeLessThan(0.02);
    expect(Math.abs(shares[2]! - 0.2)).toBeLessThan(0.02);
    // Deterministic: the same seed draws the same routes.
    const again = seededRandom(35);
    const first = Array.from({ length: 20 }, () => pickRoute(model, new Map(), again));
    const replay = seededRandom(35);
    expect(Array.from({ length: 20 }, () => pickRoute(model, new Map(), replay))).toEqual(first);
  });

  test("weighted: an open circuit's route is never drawn", () => {
    const circuits = new Map<string, CircuitBreaker>();
    const fal = new CircuitBreaker("fal", { threshold: 1, cooldownMs: 60_000 });
    fal.failure();
    circuits.set("fal", fal);
    const random = seededRandom(7);
    for (let i = 0; i < 500; i++) expect(pickRoute(model, circuits, random)).not.toBe(0);
  });

  test("fallback walks the routes once from where the job started, wrapping around", () => {
    expect([0, 1, 2].map((r) => nextRoute(model, r))).toEqual([1, 2, 0]);
    // Started on route 1 (a weighted draw), refused twice: now on route 0, first was 1.
    expect(firstRoute(model, 0, 2)).toBe(1);
    expect(firstRoute(model, 2, 0)).toBe(2);
  });
});
