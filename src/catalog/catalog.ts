import { Value } from "@sinclair/typebox/value";
import { log } from "../lib/log.ts";
import { providerType } from "../providers/list.ts";
import { defaultInputSchema } from "./input-schemas.ts";
import { type Model, ModelConfig, publicModel, type Route, UNITS_BY_KIND } from "./model.ts";
import { SANDBOX_MODELS } from "./sandbox-models.ts";

export class CatalogError extends Error {}

/** Time a job may run before it is failed and released, when the model does not say. */
const DEFAULT_TIME_LIMIT_SECONDS = 900;

/**
 * Validates one config entry and resolves it into a Model. Every error names the entry
 * (its index and id) and the field, so an operator can fix the file without guessing.
 */
export function resolveModel(raw: unknown, where: string): Model {
  const label = (() => {
    const id = (raw as { id?: unknown } | null)?.id;
    return typeof id === "string" ? `${where} (${id})` : where;
  })();
  const fail = (field: string, message: string): never => {
    throw new CatalogError(`${label}.${field}: ${message}`);
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail("", "must be a table/object");
  const first = Value.Errors(ModelConfig, raw).First();
  if (first) {
    const field = first.path.replace(/^\//, "").replaceAll("/", ".") || "(entry)";
    fail(field, first.message.toLowerCase());
  }
  const c = raw as ModelConfig;
  const unit = c.unit ?? UNITS_BY_KIND[c.kind][0]!;
  if (!UNITS_BY_KIND[c.kind].includes(unit)) {
    fail("unit", `"${unit}" is not a unit of kind ${c.kind} (allowed: ${UNITS_BY_KIND[c.kind].join(", ")})`);
  }

  if (c.kind === "text") {
    if (c.input_price_usd_micro === undefined) fail("input_price_usd_micro", "required for text models");
    if (c.output_price_usd_micro === undefined) fail("output_price_usd_micro", "required for text models");
    if (c.context === undefined) fail("context", "required for text models");
    for (const f of [
      "price_usd_micro",
      "max",
      "resolutions",
      "resolution_prices_usd_micro",
      "default_units",
    ] as const) {
      if (c[f] !== undefined) fail(f, "not used by text models (price per 1M input/output tokens)");
    }
  } else {
    for (const f of ["input_price_usd_micro", "output_price_usd_micro", "context"] as const) {
      if (c[f] !== undefined) fail(f, "only text models take this field");
    }
    if (c.max === undefined)
      fail("max", `required (the largest ${unitNoun(unit)} count one request may ask for)`);
    const tiered = c.resolutions !== undefined || c.resolution_prices_usd_micro !== undefined;
    if (tiered) {
      if (!c.resolutions) fail("resolutions", "required with resolution_prices_usd_micro");
      if (!c.resolution_prices_usd_micro) fail("resolution_prices_usd_micro", "required with resolutions");
      const listed = new Set(c.resolutions);
      for (const r of c.resolutions!) {
        if (c.resolution_prices_usd_micro![r] === undefined)
          fail("resolution_prices_usd_micro", `no price for "${r}"`);
      }
      for (const r of Object.keys(c.resolution_prices_usd_micro!)) {
        if (!listed.has(r)) fail("resolution_prices_usd_micro", `"${r}" is not in resolutions`);
      }
      if (c.price_usd_micro !== undefined)
        fail("price_usd_micro", "use resolution_prices_usd_micro for tiered models");
    } else if (c.price_usd_micro === undefined) {
      fail("price_usd_micro", "required (or resolutions with resolution_prices_usd_micro)");
    }
    if (unit === "megapixel" && c.default_units !== undefined) {
      fail("default_units", "per-megapixel models are priced from width and height, not a unit count");
    }
    if (c.default_units !== undefined && c.default_units > c.max!)
      fail("default_units", `exceeds max (${c.max})`);
    if (c.reference_video && c.kind !== "video")
      fail("reference_video", "only video models take video references");
  }
  const routes = resolveRoutes(c, fail);
  const provider = routes[0]!.provider;
  const needsDefaultUnits = c.kind !== "text" && unit !== "megapixel";
  return {
    id: c.id,
    kind: c.kind,
    unit,
    description: c.description ?? "",
    price_usd_micro: c.price_usd_micro ?? null,
    input_price_usd_micro: c.input_price_usd_micro ?? null,
    output_price_usd_micro: c.output_price_usd_micro ?? null,
    max: c.max ?? null,
    context: c.context ?? null,
    resolutions: c.resolutions ?? null,
    resolution_prices_usd_micro: c.resolution_prices_usd_micro ?? null,
    default_units: needsDefaultUnits ? (c.default_units ?? 1) : null,
    reference_video: c.reference_video ?? false,
    input_schema:
      c.input_schema ??
      defaultInputSchema({
        kind: c.kind,
        unit,
        max: c.max ?? null,
        resolutions: c.resolutions ?? null,
        referenceVideo: c.reference_video ?? false,
        sandbox: provider === "sandbox",
      }),
    provider,
    upstream_model: routes[0]!.upstream_model,
    input_map: routes[0]!.input_map,
    routes,
    routing: c.routing ?? "priority",
    time_limit_seconds: c.time_limit_seconds ?? DEFAULT_TIME_LIMIT_SECONDS,
    concurrency: c.concurrency ?? null,
  };
}

/** The single-route keys: a shorthand for `routes = [{ ... }]`, never written beside it. */
const SINGLE_ROUTE_KEYS = [
  "provider",
  "upstream_model",
  "input_map",
  "cost_usd_micro",
  "cost_input_usd_micro",
  "cost_output_usd_micro",
] as const;

/**
 * The model's routes: `routes`, or the single-route keys as one route. Text routes cost per 1M input
 * and output tokens, media routes per unit; the other kind's cost keys are refused, naming the route.
 */
function resolveRoutes(c: ModelConfig, fail: (field: string, message: string) => never): Route[] {
  if (c.routes) {
    for (const k of SINGLE_ROUTE_KEYS)
      if (c[k] !== undefined) fail(k, "write it in each of routes, not beside routes");
  }
  if (c.routing === "weighted" && !c.routes) fail("routing", "weighted routing needs routes");
  const raw = c.routes ?? [
    {
      provider: c.provider ?? "sandbox",
      upstream_model: c.upstream_model,
      input_map: c.input_map,
      cost_usd_micro: c.cost_usd_micro,
      cost_input_usd_micro: c.cost_input_usd_micro,
      cost_output_usd_micro: c.cost_output_usd_micro,
    },
  ];
  return raw.map((r, i) => {
    const at = (f: string) => (c.routes ? `routes[${i}] (${r.provider}).${f}` : f);
    if (c.kind === "text" && r.cost_usd_micro !== undefined)
      fail(
        at("cost_usd_micro"),
        "text routes cost per 1M tokens: cost_input_usd_micro, cost_output_usd_micro",
      );
    if (c.kind !== "text")
      for (const f of ["cost_input_usd_micro", "cost_output_usd_micro"] as const)
        if (r[f] !== undefined) fail(at(f), "only text routes take this field (media: cost_usd_micro)");
    if (
      c.kind === "text" &&
      (r.cost_input_usd_micro === undefined) !== (r.cost_output_usd_micro === undefined)
    )
      fail(
        at("cost_input_usd_micro"),
        "give both cost_input_usd_micro and cost_output_usd_micro, or neither",
      );
    return {
      provider: r.provider,
      upstream_model: r.upstream_model ?? null,
      input_map: r.input_map ?? {},
      cost_usd_micro: r.cost_usd_micro ?? null,
      cost_input_usd_micro: r.cost_input_usd_micro ?? null,
      cost_output_usd_micro: r.cost_output_usd_micro ?? null,
      weight: (r as { weight?: number }).weight ?? 1,
    };
  });
}

/**
 * The load-time warnings of a model: each route whose unit cost is above the model's price (the
 * operator would lose money on every unit it runs there). A tiered model's cheapest tier is its price.
 */
export function routeWarnings(m: Model): string[] {
  const out: string[] = [];
  const tiers = m.resolution_prices_usd_micro ? Object.values(m.resolution_prices_usd_micro) : [];
  const price = m.price_usd_micro ?? (tiers.length > 0 ? Math.min(...tiers) : null);
  m.routes.forEach((r, i) => {
    const where = `${m.id} route ${i} (${r.provider})`;
    const over = (what: string, cost: number | null, p: number | null) => {
      if (cost !== null && p !== null && cost > p)
        out.push(`${where}: ${what} cost ${cost} is above the model's price ${p} (micro-USD)`);
    };
    if (m.kind === "text") {
      over("input", r.cost_input_usd_micro, m.input_price_usd_micro);
      over("output", r.cost_output_usd_micro, m.output_price_usd_micro);
    } else over("unit", r.cost_usd_micro, price);
  });
  return out;
}

function unitNoun(unit: string): string {
  return unit === "second" ? "seconds" : unit === "image" ? "image" : "megapixel";
}

/**
 * An immutable snapshot of the live catalog. Reloading builds a new snapshot and swaps it in
 * whole, so a request never sees half of an old catalog and half of a new one.
 */
export class Catalog {
  private readonly byId: Map<string, Model>;
  readonly models: readonly Model[];
  /** The GET /v1/models body, rendered once per snapshot. */
  readonly publicJson: string;

  constructor(models: Model[]) {
    this.models = models;
    this.byId = new Map(models.map((m) => [m.id, m]));
    this.publicJson = JSON.stringify({ object: "list", data: models.map(publicModel) });
  }

  get(id: string): Model | undefined {
    return this.byId.get(id);
  }
}

/**
 * Builds the catalog: the built-in sandbox models, then the operator's entries. An operator entry
 * with a sandbox id replaces the built-in one; `enabled = false` removes a model.
 */
export function buildCatalog(
  operatorModels: unknown[] = [],
  options: { sandbox?: boolean; providers?: Record<string, string> } = {},
): Catalog {
  const types: Record<string, string> = { sandbox: "sandbox", ...options.providers };
  const out = new Map<string, Model>();
  if (options.sandbox !== false) {
    SANDBOX_MODELS.forEach((m, i) => {
      out.set(m.id, resolveModel(m, `built-in models[${i}]`));
    });
  }
  const seen = new Set<string>();
  operatorModels.forEach((raw, i) => {
    const model = resolveModel(raw, `models[${i}]`);
    model.routes.forEach((r, ri) => {
      const field = (raw as { routes?: unknown }).routes
        ? `routes[${ri}] (${r.provider}).provider`
        : "provider";
      const type = types[r.provider];
      if (!type) {
        throw new CatalogError(
          `models[${i}] (${model.id}).${field}: no provider "${r.provider}" (configure it under [providers.${r.provider}])`,
        );
      }
      const kinds = providerType(type)?.kinds;
      if (kinds && !kinds.includes(model.kind)) {
        throw new CatalogError(
          `models[${i}] (${model.id}).${field}: a ${type} provider does not serve ${model.kind} models`,
        );
      }
    });
    for (const warning of routeWarnings(model))
      log("warn", "route costs more than the model's price", { warning });
    if (seen.has(model.id)) throw new CatalogError(`models[${i}] (${model.id}).id: duplicate model id`);
    seen.add(model.id);
    if ((raw as { enabled?: boolean }).enabled === false) out.delete(model.id);
    else out.set(model.id, model);
  });
  return new Catalog([...out.values()]);
}
