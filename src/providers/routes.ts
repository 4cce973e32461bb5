import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";
import { type CircuitBreaker, circuitFor } from "./circuit.ts";

/**
 * The model as it runs on its route `index`: the provider, upstream model and input map are the
 * route's, so an adapter reads `job.model` as before. Out of range: the model unchanged.
 */
export function withRoute(model: Model, index: number): Model {
  const r = model.routes[index];
  if (!r) return model;
  return {
    ...model,
    provider: r.provider,
    upstream_model: r.upstream_model,
    input_map: r.input_map,
    route: index,
  };
}

/** A uniform random number in [0, 1): Math.random, or a seeded source in tests. */
export type RandomSource = () => number;

/**
 * The route a new job or chat call starts on (docs/providers.md "Routes"): `priority`, the first
 * route whose circuit is not open; `weighted`, a draw by weight among those routes. A model is 503
 * capacity_unavailable only when every route's circuit is open (the first route's error, with its
 * Retry-After). The built-in sandbox has no circuit.
 */
export function pickRoute(
  model: Model,
  circuits: Map<string, CircuitBreaker>,
  random: RandomSource = Math.random,
): number {
  const open: DomainError[] = [];
  const available = model.routes
    .map((r, i) => ({ r, i }))
    .filter(({ r }) => {
      if (r.provider === "sandbox") return true;
      try {
        circuitFor(circuits, r.provider).check();
        return true;
      } catch (err) {
        if (err instanceof DomainError) open.push(err);
        else throw err;
        return false;
      }
    });
  if (available.length === 0) {
    throw (
      open[0] ??
      new DomainError("capacity_unavailable", `${model.id} has no route.`, { retryAfterSeconds: 60 })
    );
  }
  if (model.routing !== "weighted" || available.length === 1) return available[0]!.i;
  const total = available.reduce((n, a) => n + a.r.weight, 0);
  let x = random() * total;
  for (const a of available) {
    x -= a.r.weight;
    if (x < 0) return a.i;
  }
  return available[available.length - 1]!.i;
}

/**
 * The route after `route` in the model's order, wrapping around: where a job refused by its route
 * goes next. A job that started on route k walks k, k+1, ..., n-1, 0, ..., k-1, so its first route is
 * (route - tries) mod n after `tries` refusals.
 */
export function nextRoute(model: Model, route: number): number {
  return (route + 1) % model.routes.length;
}

/** The route a job's fallback walk started on, after `tries` refusals in a row. */
export function firstRoute(model: Model, route: number, tries: number): number {
  const n = model.routes.length;
  return (((route - tries) % n) + n) % n;
}

/** mulberry32: a small seeded RandomSource (tests, and reproducible draws). */
export function seededRandom(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
