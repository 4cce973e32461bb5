import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, json, makeTestApp } from "../helpers/context.ts";

const SCRAPE_TOKEN = "scrape-token-0123456789abcdef";

async function setup(token: string | null = SCRAPE_TOKEN) {
  const t = await makeTestApp();
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
    await expectUnauthorized(await (await setup()).get());
  });

  test("the admin token as a bearer: 200", async () => {
    expect((await (await setup()).get(`Bearer ${ADMIN_TOKEN}`)).status).toBe(200);
  });

  test("the scrape token of [metrics] as a bearer: 200", async () => {
    expect((await (await setup()).get(`Bearer ${SCRAPE_TOKEN}`)).status).toBe(200);
  });

  test("a wrong token, a prefix of the right one, or an API key: 401", async () => {
    const { t, get } = await setup();
    await expectUnauthorized(await get("Bearer wrong-token-wrong-token-wrong"));
    await expectUnauthorized(await get(`Bearer ${SCRAPE_TOKEN.slice(0, -1)}`));
    await expectUnauthorized(await get(`Bearer ${ADMIN_TOKEN}x`));
    await expectUnauthorized(await get(`Bearer ${t.key}`));
    await expectUnauthorized(await get(`Basic ${btoa(`x:${ADMIN_TOKEN}`)}`));
  });

  test("without a configured scrape token only the admin token works (an empty bearer is no token)", async () => {
    const { get } = await setup(null);
    await expectUnauthorized(await get(`Bearer ${SCRAPE_TOKEN}`));
    await expectUnauthorized(await get("Bearer "));
    expect((await get(`Bearer ${ADMIN_TOKEN}`)).status).toBe(200);
  });

  test("the 401 leaks no metric", async () => {
    const res = await (await setup()).get();
    expect(await res.text()).not.toContain("gengate_");
  });
});
