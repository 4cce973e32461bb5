import { Value } from "@sinclair/typebox/value";
import { providerType } from "../providers/list.ts";
import { defaultInputSchema } from "./input-schemas.ts";
import { type Model, ModelConfig, publicModel, UNITS_BY_KIND } from "./model.ts";
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
  const provider = c.provider ?? "sandbox";
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
    upstream_model: c.upstream_model ?? null,
    input_map: c.input_map ?? {},
    time_limit_seconds: c.time_limit_seconds ?? DEFAULT_TIME_LIMIT_SECONDS,
    concurrency: c.concurrency ?? null,
  };
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
    const type = types[model.provider];
    if (!type) {
      throw new CatalogError(
        `models[${i}] (${model.id}).provider: no provider "${model.provider}" (configure it under [providers.${model.provider}])`,
      );
    }
    const kinds = providerType(type)?.kinds;
    if (kinds && !kinds.includes(model.kind)) {
      throw new CatalogError(
        `models[${i}] (${model.id}).provider: a ${type} provider does not serve ${model.kind} models`,
      );
    }
    if (seen.has(model.id)) throw new CatalogError(`models[${i}] (${model.id}).id: duplicate model id`);
    seen.add(model.id);
    if ((raw as { enabled?: boolean }).enabled === false) out.delete(model.id);
    else out.set(model.id, model);
  });
  return new Catalog([...out.values()]);
}
