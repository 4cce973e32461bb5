import { describe, expect, test } from "bun:test";
import { webhookRoutes } from "../../src/webhooks/http.ts";
import { WebhookSecretStore } from "../../src/webhooks/secret-store.ts";
import { json, makeTestApp } from "../helpers/context.ts";

type ErrorBody = { error: { code: string; type: string; message: string } };

/** The test app with the webhook routes: mounted here unless createApp already wires them. */
async function app() {
  const t = await makeTestApp();
  const ctx = t.ctx as typeof t.ctx & { webhookSecrets?: WebhookSecretStore };
  const mounted = t.app.routes.some((r) => r.path === "/v1/account/webhook-secret");
  if (!mounted) {
    t.app.use(
      webhookRoutes({ ...ctx, webhookSecrets: ctx.webhookSecrets ?? new WebhookSecretStore(ctx.sql) }),
    );
  }
  const plainKey = (await t.ctx.accounts.createKey(t.account.id, { name: "project", canManage: false })).key;
  return { ...t, plainKey };
}

describe("webhook secret API (happy)", () => {
  test("GET returns the account's whsec_ secret, the same on every read and for every key", async () => {
    const t = await app();
    const res = await t.request("/v1/account/webhook-secret");
    expect(res.status).toBe(200);
    const { secret } = await json<{ secret: string }>(res);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect((await json(await t.request("/v1/account/webhook-secret"))).secret).toBe(secret);
    const byPlainKey = await t.request("/v1/account/webhook-secret", { key: t.plainKey });
    expect(byPlainKey.status).toBe(200);
    expect((await json(byPlainKey)).secret).toBe(secret);
  });

  test("POST rotate returns a new secret, which GET then returns", async () => {
    const t = await app();
    const old = (await json(await t.request("/v1/account/webhook-secret"))).secret;
    const res = await t.request("/v1/account/webhook-secret/rotate", { method: "POST" });
    expect(res.status).toBe(200);
    const { secret } = await json<{ secret: string }>(res);
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(old);
    expect((await json(await t.request("/v1/account/webhook-secret"))).secret).toBe(secret);
  });

  test("accounts do not share secrets", async () => {
    const t = await app();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const mine = (await json(await t.request("/v1/account/webhook-secret"))).secret;
    const theirs = (await json(await t.request("/v1/account/webhook-secret", { key: other.key }))).secret;
    expect(theirs).not.toBe(mine);
  });
});

describe("webhook secret API (errors)", () => {
  test("no key or a wrong key: 401 unauthorized in the contract's error body", async () => {
    const t = await app();
    for (const key of [null, "gk_wrongwrongwrongwrongwrongwrongwrongwrong"]) {
      const res = await t.request("/v1/account/webhook-secret", { key });
      expect(res.status).toBe(401);
      expect((await json<ErrorBody>(res)).error.code).toBe("unauthorized");
    }
    const rotate = await t.request("/v1/account/webhook-secret/rotate", { method: "POST", key: null });
    expect(rotate.status).toBe(401);
  });

  test("rotating needs the manage right: 403 forbidden, and the secret is unchanged", async () => {
    const t = await app();
    const before = (await json(await t.request("/v1/account/webhook-secret"))).secret;
    const res = await t.request("/v1/account/webhook-secret/rotate", { method: "POST", key: t.plainKey });
    expect(res.status).toBe(403);
    const body = await json<ErrorBody>(res);
    expect(body.error.code).toBe("forbidden");
    expect(body.error.message).toMatch(/manage right/);
    expect((await json(await t.request("/v1/account/webhook-secret"))).secret).toBe(before);
  });
});
