import type { Model } from "../../../src/catalog/model.ts";
import { createCogProvider } from "../../../src/providers/cog/provider.ts";
import type { ProviderCallback } from "../../../src/providers/types.ts";
import { makeTestApp, testWorkerPool } from "../../helpers/context.ts";
import { type StandInCog, startStandInCog } from "./stand-in-cog.ts";

/** An open schema: the stand-in, not the gateway, validates the input (its 422 is under test). */
const open = { type: "object" };

/**
 * An in-process gateway with one cog provider ("box") on a stand-in cog server, served on a local
 * port so the stand-in's webhooks reach it (the signed URLs name the test's public URL; the stand-in
 * sends them to this port instead), and a worker pool.
 */
export async function cogGateway(o: { cog?: Parameters<typeof startStandInCog>[0]; baseUrl?: string } = {}) {
  let port = 0;
  const cog: StandInCog = startStandInCog({ ...o.cog, webhookOrigin: () => `http://127.0.0.1:${port}` });
  const t = await makeTestApp({
    models: [
      {
        id: "box/img",
        kind: "image",
        provider: "box",
        upstream_model: "ignored",
        price_usd_micro: 3000,
        max: 4,
        input_schema: open,
      },
      {
        id: "box/slow",
        kind: "image",
        provider: "box",
        price_usd_micro: 3000,
        max: 1,
        time_limit_seconds: 1,
        input_schema: open,
      },
    ],
    providers: { box: { type: "cog", base_url: o.baseUrl ?? cog.url, timeout_seconds: 5 } },
  });
  const gw = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => t.app.handle(r) });
  port = gw.port!;
  await t.ctx.ledger.topUp(t.account.id, 1_000_000_000n, null);
  const pool = testWorkerPool(t.ctx, { concurrency: () => 1 });

  /** What the job's hold became: held, charged (0 unless settled) and its status. */
  async function money(id: string) {
    const job = (await t.ctx.jobs.get(id))!;
    const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
    const charges = await t.ctx.sql.all<{ n: number }>(
      "SELECT COUNT(*) AS n FROM ledger_entries WHERE request_id = ? AND kind = 'charge'",
      [id],
    );
    return {
      status: hold.status,
      charged: hold.status === "settled" ? (hold.charged_usd_micro ?? 0n) : 0n,
      chargeEntries: Number(charges[0]?.n ?? 0),
    };
  }

  async function recorded(id: string) {
    return await t.ctx.sql.get<{ provider: string; payload: string }>(
      "SELECT provider, payload FROM upstream_callbacks WHERE job_id = ?",
      [id],
    );
  }

  return {
    t,
    cog,
    money,
    recorded,
    gatewayUrl: () => `http://127.0.0.1:${port}`,
    stop: async () => {
      await pool.stop(1000);
      gw.stop(true);
      cog.stop();
    },
  };
}

/**
 * The cog adapter run on its own (no worker) against `baseUrl` for one job: `upstreamId` set is a
 * resumed job. Returns the run's promise, the ids it recorded and its abort controller.
 */
export function runCogDirect(o: {
  baseUrl: string;
  model: Model;
  id: string;
  upstreamId?: string | null;
  callback: ProviderCallback;
}) {
  const controller = new AbortController();
  const recordedIds: string[] = [];
  const run = createCogProvider("box", {
    type: "cog",
    baseUrl: o.baseUrl,
    apiKey: null,
    timeoutMs: 2000,
    concurrency: 1,
    pollIntervalMs: 0,
    workflows: {},
  }).run({
    id: o.id,
    model: o.model,
    input: { prompt: "x" },
    attempt: o.upstreamId ? 2 : 1,
    upstreamId: o.upstreamId ?? null,
    signal: controller.signal,
    log: () => {},
    setUpstreamId: async (id) => void recordedIds.push(id),
    callback: o.callback,
    readInput: () => Promise.reject(new Error("the cog provider reads no input file")),
  });
  return { run, recordedIds, controller };
}
