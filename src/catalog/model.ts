import { type Static, Type as T } from "@sinclair/typebox";
import { KINDS, type Kind } from "../lib/kinds.ts";

export { KINDS, type Kind };

/** The billing unit each model kind (src/lib/kinds.ts) may use. */
export const UNITS = ["second", "image", "megapixel", "1M_tokens"] as const;
export type Unit = (typeof UNITS)[number];

export const UNITS_BY_KIND: Record<Kind, readonly Unit[]> = {
  video: ["second"],
  avatar: ["second"],
  audio: ["second"],
  image: ["image", "megapixel"],
  upscale: ["second", "image", "megapixel"],
  text: ["1M_tokens"],
};

const Micro = T.Integer({ minimum: 0, maximum: 1_000_000_000_000 });
const InputMap = T.Record(T.String({ minLength: 1 }), T.String({ minLength: 1 }), {
  description: 'Renames input fields for the upstream: { gateway_field = "upstream_field" }.',
});

/** Most routes one model may have: enough for every upstream an operator could buy one model from. */
export const MAX_ROUTES = 16;

/** One upstream a model runs on, as written in `routes = [...]` (docs/providers.md "Routes"). */
export const RouteConfig = T.Object(
  {
    provider: T.String({ minLength: 1, maxLength: 64 }),
    upstream_model: T.Optional(T.String({ minLength: 1, maxLength: 256 })),
    input_map: T.Optional(InputMap),
    cost_usd_micro: T.Optional(Micro),
    cost_input_usd_micro: T.Optional(Micro),
    cost_output_usd_micro: T.Optional(Micro),
    weight: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);
export type RouteConfig = Static<typeof RouteConfig>;

/**
 * A resolved route. Costs are what the operator pays the upstream, integer micro-USD per unit of the
 * model (text: per 1M input and output tokens); null = not configured (the job's cost is unknown).
 */
export interface Route {
  provider: string;
  upstream_model: string | null;
  input_map: Record<string, string>;
  cost_usd_micro: number | null;
  cost_input_usd_micro: number | null;
  cost_output_usd_micro: number | null;
  weight: number;
}

export const ROUTINGS = ["priority", "weighted"] as const;
export type Routing = (typeof ROUTINGS)[number];

const ModelId = T.String({ pattern: "^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)+$", maxLength: 128 });

/**
 * A catalog entry as an operator writes it in the config file (TOML or JSON).
 * Prices are integer micro-USD per unit; text prices are per 1M tokens.
 */
export const ModelConfig = T.Object(
  {
    id: ModelId,
    kind: T.Union(KINDS.map((k) => T.Literal(k))),
    unit: T.Optional(T.Union(UNITS.map((u) => T.Literal(u)))),
    description: T.Optional(T.String({ maxLength: 2000 })),
    price_usd_micro: T.Optional(Micro),
    input_price_usd_micro: T.Optional(Micro),
    output_price_usd_micro: T.Optional(Micro),
    max: T.Optional(T.Integer({ minimum: 1, maximum: 100_000 })),
    context: T.Optional(T.Integer({ minimum: 1, maximum: 100_000_000 })),
    resolutions: T.Optional(T.Array(T.String({ minLength: 1, maxLength: 32 }), { minItems: 1 })),
    resolution_prices_usd_micro: T.Optional(T.Record(T.String(), Micro)),
    default_units: T.Optional(T.Integer({ minimum: 1 })),
    /** Reference-to-video: the input carries input_duration_sec and is priced on it. */
    reference_video: T.Optional(T.Boolean()),
    input_schema: T.Optional(T.Record(T.String(), T.Unknown())),
    provider: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    upstream_model: T.Optional(T.String({ minLength: 1, maxLength: 256 })),
    input_map: T.Optional(InputMap),
    cost_usd_micro: T.Optional(Micro),
    cost_input_usd_micro: T.Optional(Micro),
    cost_output_usd_micro: T.Optional(Micro),
    routes: T.Optional(T.Array(RouteConfig, { minItems: 1, maxItems: MAX_ROUTES })),
    routing: T.Optional(T.Union(ROUTINGS.map((r) => T.Literal(r)))),
    time_limit_seconds: T.Optional(T.Integer({ minimum: 1, maximum: 86_400 })),
    concurrency: T.Optional(T.Integer({ minimum: 1, maximum: 1000 })),
    enabled: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
);
export type ModelConfig = Static<typeof ModelConfig>;

/** A validated, fully resolved catalog entry (defaults filled in). */
export interface Model {
  id: string;
  kind: Kind;
  unit: Unit;
  description: string;
  price_usd_micro: number | null;
  input_price_usd_micro: number | null;
  output_price_usd_micro: number | null;
  max: number | null;
  context: number | null;
  resolutions: string[] | null;
  resolution_prices_usd_micro: Record<string, number> | null;
  default_units: number | null;
  reference_video: boolean;
  input_schema: Record<string, unknown>;
  /**
   * The route this value runs on: the first route in the catalog's entry; the chosen one in a value
   * from `withRoute` (a job's route, as the adapters read it).
   */
  provider: string;
  upstream_model: string | null;
  /** Input field renames for the upstream (gateway field -> upstream field). */
  input_map: Record<string, string>;
  /** Every upstream the model runs on, in the operator's order (at least one). */
  routes: Route[];
  /** The index in `routes` of the route this value runs on (withRoute); absent: the first. */
  route?: number;
  routing: Routing;
  time_limit_seconds: number;
  /** Most jobs of this model running at once, or null for the provider's limit only. */
  concurrency: number | null;
}

/**
 * `created` of every catalog entry (unix seconds): OpenAI's model object needs one, and it must not
 * change between reads, reloads or restarts. gengate does not track when an operator added a model,
 * so every entry carries the same fixed epoch (2026-11-21T00:00:00Z, gengate's first release).
 */
export const MODEL_CREATED_EPOCH = 1_795_219_200;

/** `owned_by`: the model id's owner segment ("sandbox" of "sandbox/chat"), already public in the id. */
export function modelOwner(id: string): string {
  return id.slice(0, id.indexOf("/"));
}

/**
 * The public catalog entry (docs/api.md "Catalog entry"; money as decimal strings), plus OpenAI's model
 * object fields (`object`, `created`, `owned_by`) so OpenAI SDKs can list and retrieve models.
 */
export function publicModel(m: Model) {
  const s = (n: number | null) => (n === null ? undefined : String(n));
  return {
    id: m.id,
    object: "model" as const,
    created: MODEL_CREATED_EPOCH,
    owned_by: modelOwner(m.id),
    kind: m.kind,
    unit: m.unit,
    price_usd_micro: s(m.price_usd_micro),
    input_price_usd_micro: s(m.input_price_usd_micro),
    output_price_usd_micro: s(m.output_price_usd_micro),
    max: m.max ?? undefined,
    context: m.context ?? undefined,
    resolutions: m.resolutions ?? undefined,
    resolution_prices_usd_micro: m.resolution_prices_usd_micro
      ? Object.fromEntries(Object.entries(m.resolution_prices_usd_micro).map(([k, v]) => [k, String(v)]))
      : undefined,
    default_units: m.default_units ?? undefined,
    omitted_units: m.default_units ?? undefined,
    description: m.description,
    input_schema: m.input_schema,
  };
}
export type PublicModel = Awaited<ReturnType<typeof publicModel>>;
