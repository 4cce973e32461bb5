import { circuitFor, GuardedProvider } from "../../src/providers/circuit.ts";
import { createFalProvider } from "../../src/providers/fal/index.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { makeTestApp, submitQueued, testWorkerPool } from "../helpers/context.ts";
import { freePort } from "../helpers/server.ts";
import { settings } from "../providers/fal/helpers.ts";
import { type Behaviour, type MockFal, startMockFal } from "../providers/fal/mock-fal.ts";
import { png } from "../providers/media-fixtures.ts";

/** A fal result the worker stores without fetching anything: one 8x8 PNG as a data: URL. */
export const DATA_RESULT = {
  images: [{ url: `data:image/png;base64,${Buffer.from(png(8, 8)).toString("base64")}` }],
};

/** A port nothing listens on: connecting is refused at once (nothing is sent). */
export function refusedUrl(): string {
  return `http://127.0.0.1:${freePort()}`;
}

/**
 * An in-process gengate with two stand-ins of fal's queue API (test/providers/fal/mock-fal.ts, after
 * fal's queue docs) as providers "first" and "second", plus "down" (a refused port); each model of
 * `models` routes over them. Every provider is circuit-guarded as the server's registry does it.
 */
export async function twoFals(models: unknown[]) {
  const a = startMockFal();
  const b = startMockFal();
  const down = refusedUrl();
  const t = await makeTestApp({
    models,
    providers: {
      first: { type: "fal", base_url: a.url },
      second: { type: "fal", base_url: b.url },
      down: { type: "fal", base_url: down },
    },
  });
  await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
  const add = (name: string, url: string, key: string) =>
    t.ctx.providers.set(
      name,
      new GuardedProvider(
        createFalProvider(name, settings(url, key, { timeoutMs: 1000 })),
        circuitFor(t.ctx.circuits, name),
      ),
    );
  add("first", a.url, a.key);
  add("second", b.url, b.key);
  add("down", down, a.key);
  let pool: WorkerPool | null = null;
  const start = () => {
    pool = testWorkerPool(t.ctx, {
      circuitOpen: (p) => t.ctx.circuits.get(p)?.isOpen() ?? false,
    });
    return pool;
  };
  return {
    t,
    a,
    b,
    start,
    submit: (model: string) => submitQueued(t, model, { prompt: "a fox" }),
    on: (fal: MockFal, upstream: string, behaviour: Behaviour) => fal.on(upstream, behaviour),
    stop: async () => {
      await (pool as WorkerPool | null)?.stop(1000);
      a.stop();
      b.stop();
    },
  };
}

/** An image model over routes (fal upstream model ids), $0.03 per image, 2 images at most. */
export function routed(id: string, routes: unknown[], extra: Record<string, unknown> = {}) {
  return { id, kind: "image", price_usd_micro: 30_000, max: 2, routes, ...extra };
}
