import { afterEach, describe, expect, test } from "bun:test";
import { startBackground } from "../../src/app/background.ts";
import { pollUntil } from "../helpers/api.ts";
import { ADMIN_TOKEN, json, makeTestApp } from "../helpers/context.ts";
import { parseExposition, sampleValue } from "./parse.ts";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function setup() {
  const t = await makeTestApp();
  await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
  const scrape = async () => {
    const res = await t.request("/metrics", {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    return parseExposition(await res.text());
  };
  const submit = async (model: string, body: unknown) =>
    json<{ request_id: string }>(
      await t.request(`/v1/queue/${model}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  return { t, scrape, submit };
}

describe("GET /metrics: content", () => {
  test("declares every family with HELP and TYPE and parses strictly", async () => {
    const { scrape } = await setup();
    const f = await scrape();
    for (const name of [
      "gengate_build_info",
      "process_start_time_seconds",
      "process_resident_memory_bytes",
      "gengate_http_request_duration_seconds",
      "gengate_jobs_finished_total",
      "gengate_charged_micro_total",
      "gengate_webhook_attempts_total",
      "gengate_jobs",
      "gengate_queue_depth",
      "gengate_workers",
      "gengate_workers_busy",
      "gengate_provider_circuit_state",
      "gengate_provider_consecutive_failures",
      "gengate_accounts",
      "gengate_balance_micro",
      "gengate_held_micro",
      "gengate_webhook_deliveries_pending",
      "gengate_database_bytes",
      "gengate_storage_bytes",
      "gengate_storage_free_bytes",
      "gengate_metrics_scrape_duration_seconds",
    ]) {
      expect(f.get(name)?.help.length ?? 0).toBeGreaterThan(10);
    }
    expect(sampleValue(f, "gengate_build_info", { version: "0.0.0-test" })).toBe(1);
    expect(sampleValue(f, "gengate_provider_circuit_state", { provider: "sandbox", state: "closed" })).toBe(
      1,
    );
    expect(sampleValue(f, "gengate_provider_circuit_state", { provider: "sandbox", state: "open" })).toBe(0);
    expect(sampleValue(f, "gengate_balance_micro", { currency: "USD" })).toBe(100_000_000);
    expect(sampleValue(f, "gengate_held_micro", { currency: "USD" })).toBe(0);
    expect(sampleValue(f, "gengate_accounts", { currency: "RUB" })).toBe(0);
    expect(sampleValue(f, "gengate_queue_depth", { provider: "sandbox" })).toBe(0);
  });

  test("queued jobs show as queue depth, held money and jobs by state; final states and charges count", async () => {
    const { t, scrape, submit } = await setup();
    // Before any worker runs: two queued jobs, one then cancelled.
    const a = await submit("sandbox/image", { prompt: "a", num_images: 1 });
    const b = await submit("sandbox/image", { prompt: "b", num_images: 1 });
    let f = await scrape();
    expect(sampleValue(f, "gengate_queue_depth", { provider: "sandbox" })).toBe(2);
    expect(sampleValue(f, "gengate_jobs", { model: "sandbox/image", state: "IN_QUEUE" })).toBe(2);
    const held = sampleValue(f, "gengate_held_micro", { currency: "USD" })!;
    expect(held).toBe(
      Number((await t.ctx.ledger.getHold((await t.ctx.jobs.get(a.request_id))!.hold_id))!.amount_micro) * 2,
    );

    expect((await t.request(`/v1/requests/${b.request_id}/cancel`, { method: "POST" })).status).toBe(200);
    const bg = await startBackground(t.ctx);
    stops.push(() => bg.stop(1000));
    await submit("sandbox/image", { prompt: "c", sandbox: { fail: true } });
    await pollUntil(
      async () => (await t.ctx.jobs.get(a.request_id))!.status,
      (s) => s === "COMPLETED",
    );
    await pollUntil(
      async () =>
        sampleValue(await scrape(), "gengate_jobs_finished_total", {
          model: "sandbox/image",
          state: "FAILED",
        }),
      (n) => n === 1,
    );
    f = await scrape();
    expect(
      sampleValue(f, "gengate_jobs_finished_total", { model: "sandbox/image", state: "COMPLETED" }),
    ).toBe(1);
    expect(
      sampleValue(f, "gengate_jobs_finished_total", { model: "sandbox/image", state: "CANCELLED" }),
    ).toBe(1);
    const charged = (await t.ctx.ledger.getHold((await t.ctx.jobs.get(a.request_id))!.hold_id))!
      .charged_micro!;
    expect(charged).toBeGreaterThan(0n);
    expect(sampleValue(f, "gengate_charged_micro_total", { currency: "USD", model: "sandbox/image" })).toBe(
      Number(charged),
    );
    expect(sampleValue(f, "gengate_held_micro", { currency: "USD" })).toBe(0);
    expect(sampleValue(f, "gengate_queue_depth", { provider: "sandbox" })).toBe(0);
    expect(sampleValue(f, "gengate_workers", { provider: "sandbox" })).toBe(8);
    expect(sampleValue(f, "gengate_workers_busy", { provider: "sandbox" })).toBe(0);
  });

  test("a final state and its charge are counted at the commit, together: inside the transaction neither", async () => {
    // A scrape in the window between the two counts saw the job finished and not yet charged (CI,
    // PostgreSQL: the charge was counted a round trip after the final state).
    const { t, scrape, submit } = await setup();
    const { request_id } = await submit("sandbox/image", { prompt: "a", num_images: 1 });
    const job = (await t.ctx.jobs.claimNext("sandbox", [], "w", 60_000, Date.now()))!;
    expect(job.id).toBe(request_id);
    const finished = () => t.ctx.metrics.jobsFinished.get(["sandbox/image", "COMPLETED"]);
    const charged = () => Number(t.ctx.metrics.charged.get(["USD", "sandbox/image"]));
    let inside: number[] = [];
    await t.ctx.sql.tx(async (tx) => {
      expect(await t.ctx.jobs.in(tx).complete(job.id, {}, [], 1_000n, "1", 60_000, Date.now())).toBe(true);
      inside = [finished(), charged()];
    });
    expect(inside).toEqual([0, 0]);
    expect([finished(), charged()]).toEqual([1, 1_000]);
    const f = await scrape();
    expect(
      sampleValue(f, "gengate_jobs_finished_total", { model: "sandbox/image", state: "COMPLETED" }),
    ).toBe(1);
    expect(sampleValue(f, "gengate_charged_micro_total", { currency: "USD", model: "sandbox/image" })).toBe(
      1_000,
    );
  });

  test("a chat completion counts as a finished job and a charge of the chat model", async () => {
    const { t, scrape } = await setup();
    const res = await t.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "sandbox/chat",
        messages: [{ role: "user", content: "hello" }],
        max_tokens: 8,
      }),
    });
    expect(res.status).toBe(200);
    const f = await scrape();
    expect(sampleValue(f, "gengate_jobs_finished_total", { model: "sandbox/chat", state: "COMPLETED" })).toBe(
      1,
    );
    expect(
      sampleValue(f, "gengate_charged_micro_total", { currency: "USD", model: "sandbox/chat" }),
    ).toBeGreaterThan(0);
  });

  test("webhook attempts count by outcome: a 2xx is delivered, a 500 is a retry still pending", async () => {
    const { t, scrape, submit } = await setup();
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => new Response("", { status: new URL(req.url).pathname === "/ok" ? 200 : 500 }),
    });
    stops.push(async () => void receiver.stop(true));
    t.ctx.live.webhooks = { allowPrivateCidrs: ["127.0.0.0/8"] };
    const bg = await startBackground(t.ctx);
    stops.push(() => bg.stop(1000));
    const base = `http://127.0.0.1:${receiver.port}`;
    await submit("sandbox/image", { prompt: "a", webhook_url: `${base}/ok` });
    await submit("sandbox/image", { prompt: "b", webhook_url: `${base}/down` });
    const f = await pollUntil(
      async () => await scrape(),
      (f) =>
        sampleValue(f, "gengate_webhook_attempts_total", { outcome: "retry" }) === 1 &&
        sampleValue(f, "gengate_webhook_attempts_total", { outcome: "delivered" }) === 1,
    );
    expect(sampleValue(f, "gengate_webhook_attempts_total", { outcome: "failed" })).toBeUndefined();
    expect(sampleValue(f, "gengate_webhook_deliveries_pending")).toBe(1);
  });
});
