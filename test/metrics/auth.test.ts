import { describe, expect, test } from "bun:test";
import { ConfigError, liveSettingsFrom } from "../../src/config/load.ts";
import { ADMIN_TOKEN, json, makeTestApp } from "../helpers/context.ts";

const SCRAPE_TOKEN = "scrape-token-0123456789abcdef";

function setup(token: string | null = SCRAPE_TOKEN) {
  const t = makeTestApp();
  t.ctx.live = { ...t.ctx.live, metrics: { ...t.ctx.live.metrics, token } };
  const get = (authorization?: string) =>
    t.request("/metrics", { key: null, headers: authorization ? { authorization } : {} });
  return { t, get };
}

async function expectUnauthorized(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = await json<{ error: { code: string; type: string; message: string } }>(res);
  expect(body.error.code).toBe("unauthorized");
  expect(body.error.type).toBe("authentication_error");
  expect(body.error.message).toContain("Bearer");
}

describe("GET /metrics is never public", () => {
  test("no Authorization header: 401 with the contract's error body", async () => {
    await expectUnauthorized(await setup().get());
  });

  test("the admin token as a bearer: 200", async () => {
    expect((await setup().get(`Bearer ${ADMIN_TOKEN}`)).status).toBe(200);
  });

  test("the scrape token of [metrics] as a bearer: 200", async () => {
    expect((await setup().get(`Bearer ${SCRAPE_TOKEN}`)).status).toBe(200);
  });

  test("a wrong token, a prefix of the right one, or an API key: 401", async () => {
    const { t, get } = setup();
    await expectUnauthorized(await get("Bearer wrong-token-wrong-token-wrong"));
    await expectUnauthorized(await get(`Bearer ${SCRAPE_TOKEN.slice(0, -1)}`));
    await expectUnauthorized(await get(`Bearer ${ADMIN_TOKEN}x`));
    await expectUnauthorized(await get(`Bearer ${t.key}`));
    await expectUnauthorized(await get(`Basic ${btoa(`x:${ADMIN_TOKEN}`)}`));
  });

  test("without a configured scrape token only the admin token works (an empty bearer is no token)", async () => {
    const { get } = setup(null);
    await expectUnauthorized(await get(`Bearer ${SCRAPE_TOKEN}`));
    await expectUnauthorized(await get("Bearer "));
    expect((await get(`Bearer ${ADMIN_TOKEN}`)).status).toBe(200);
  });

  test("the 401 leaks no metric", async () => {
    const res = await setup().get();
    expect(await res.text()).not.toContain("gengate_");
  });
});

describe("[metrics] configuration", () => {
  test("token precedence: GENGATE_METRICS_TOKEN over token_file over token", () => {
    const file = { metrics: { token: "from-config-0123456789" } };
    expect(liveSettingsFrom(file, {}).metrics.token).toBe("from-config-0123456789");
    expect(liveSettingsFrom(file, { GENGATE_METRICS_TOKEN: "from-env-0123456789ab" }).metrics.token).toBe(
      "from-env-0123456789ab",
    );
    expect(liveSettingsFrom({}, {}).metrics).toEqual({ token: null, listen: null, listenAuth: true });
  });

  test("a short or spaced token and an unreadable token_file stop the start with one line", () => {
    expect(() => liveSettingsFrom({}, { GENGATE_METRICS_TOKEN: "short" })).toThrow(ConfigError);
    expect(() => liveSettingsFrom({}, { GENGATE_METRICS_TOKEN: "has a space in it 0123" })).toThrow(
      /GENGATE_METRICS_TOKEN: the metrics token must be 16/,
    );
    expect(() => liveSettingsFrom({ metrics: { token_file: "/no/such/file" } }, {})).toThrow(
      /metrics.token_file: cannot read/,
    );
  });

  test("listen: host:port, IPv6 in brackets; listen_auth none only when said", () => {
    expect(liveSettingsFrom({ metrics: { listen: "127.0.0.1:9091" } }, {}).metrics).toEqual({
      token: null,
      listen: { host: "127.0.0.1", port: 9091 },
      listenAuth: true,
    });
    const v6 = liveSettingsFrom({ metrics: { listen: "[::1]:9091", listen_auth: "none" } }, {}).metrics;
    expect(v6.listen).toEqual({ host: "::1", port: 9091 });
    expect(v6.listenAuth).toBe(false);
    expect(() => liveSettingsFrom({ metrics: { listen: "127.0.0.1:99999" } }, {})).toThrow(/metrics.listen/);
  });
});
