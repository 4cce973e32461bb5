import { afterAll, describe, expect, test } from "bun:test";
import { fetchRate, refreshRateOnce } from "../../src/fx/refresh.ts";
import { testServices } from "../helpers/services.ts";

// A local rate source: each path answers a different body.
const bodies: Record<string, [number, string]> = {
  "/plain": [200, "92.5\n"],
  "/json": [200, JSON.stringify({ base: "USD", rates: { RUB: 91.123456 } })],
  "/json-string": [200, JSON.stringify({ rates: { RUB: "90.1" } })],
  "/negative": [200, JSON.stringify({ rates: { RUB: -3 } })],
  "/missing": [200, JSON.stringify({ rates: {} })],
  "/broken": [200, "{not json"],
  "/down": [503, "maintenance"],
};
const source = Bun.serve({
  port: 0,
  fetch: (req) => {
    const [status, body] = bodies[new URL(req.url).pathname] ?? [404, ""];
    return new Response(body, { status });
  },
});
afterAll(() => source.stop(true));
const url = (p: string) => `http://127.0.0.1:${source.port}${p}`;

describe("FX refresh from a configured URL", () => {
  test("a bare number body", async () => {
    expect(await fetchRate({ url: url("/plain"), field: null, cron: "0 * * * *" })).toBe(92_500_000n);
  });

  test("a JSON body with a dot path, number or string", async () => {
    expect(await fetchRate({ url: url("/json"), field: "rates.RUB", cron: "0 * * * *" })).toBe(91_123_456n);
    expect(await fetchRate({ url: url("/json-string"), field: "rates.RUB", cron: "0 * * * *" })).toBe(
      90_100_000n,
    );
  });

  test("a successful refresh stores the rate; a failed one keeps the previous rate", async () => {
    const t = await testServices();
    expect(await refreshRateOnce({ url: url("/plain"), field: null, cron: "x" }, t.ctx.fx)).toBe(92_500_000n);
    expect((await t.ctx.fx.get("RUB"))!.rate_micro).toBe(92_500_000n);
    for (const [p, field] of [
      ["/negative", "rates.RUB"],
      ["/missing", "rates.RUB"],
      ["/broken", "rates.RUB"],
      ["/down", null],
    ] as const) {
      expect(await refreshRateOnce({ url: url(p), field, cron: "x" }, t.ctx.fx)).toBeNull();
      expect((await t.ctx.fx.get("RUB"))!.rate_micro).toBe(92_500_000n);
    }
  });
});
