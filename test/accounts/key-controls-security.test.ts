/**
 * Key controls cannot be used to reach another account or to lift a key's own limits: only a key
 * with the manage right changes them, only for its own account, and a disabled, expired or
 * out-of-place key cannot undo its own state.
 */
import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Err = { error: { code: string } };
const send = (method: string, body: unknown, key?: string) => ({
  method,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
  ...(key ? { key } : {}),
});

async function setup() {
  const peer = { address: "203.0.113.7" };
  const t = await makeTestApp({ peers: { requestIP: () => ({ address: peer.address }) } });
  const made = async (body: Record<string, unknown>) =>
    await json<{ id: string; key: string }>(await t.request("/v1/keys", send("POST", body)));
  return { t, peer, made };
}

describe("key controls: security", () => {
  test("another account's key is 404 and stays as it was", async () => {
    const { t } = await setup();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const res = await t.request(`/v1/keys/${other.keyId}`, send("PATCH", { disabled: true }));
    expect(res.status).toBe(404);
    expect((await t.ctx.accounts.findKey(other.keyId))!.disabled_at).toBeNull();
  });

  test("a key without the manage right cannot change any key's controls (403), its own included", async () => {
    const { t, made } = await setup();
    const plain = await made({ name: "plain", allowed_models: ["sandbox/image"] });
    for (const [id, body] of [
      [plain.id, { allowed_models: null }],
      [t.keyId, { disabled: true }],
    ] as const) {
      const res = await t.request(`/v1/keys/${id}`, send("PATCH", body, plain.key));
      expect(res.status).toBe(403);
    }
    expect((await t.ctx.accounts.findKey(plain.id))!.allowed_models).toBe('["sandbox/image"]');
  });

  test("a disabled manage key cannot enable itself", async () => {
    const { t, made } = await setup();
    const admin = await made({ name: "m", can_manage: true });
    expect((await t.request(`/v1/keys/${admin.id}`, send("PATCH", { disabled: true }))).status).toBe(200);
    const res = await t.request(`/v1/keys/${admin.id}`, send("PATCH", { disabled: false }, admin.key));
    expect(res.status).toBe(401);
    expect((await json<Err>(res)).error.code).toBe("unauthorized");
  });

  test("a manage key used from outside its addresses cannot widen them", async () => {
    const { t, peer, made } = await setup();
    const admin = await made({ name: "m", can_manage: true, allowed_cidrs: ["198.51.100.0/24"] });
    peer.address = "203.0.113.9";
    const res = await t.request(`/v1/keys/${admin.id}`, send("PATCH", { allowed_cidrs: null }, admin.key));
    expect(res.status).toBe(403);
    expect((await json<Err>(res)).error.code).toBe("address_not_allowed");
    expect((await t.ctx.accounts.findKey(admin.id))!.allowed_cidrs).toBe('["198.51.100.0/24"]');
  });

  test("an unknown client address (no socket peer) is outside every allow-list", async () => {
    const t = await makeTestApp();
    const made = await json<{ key: string }>(
      await t.request("/v1/keys", send("POST", { name: "c", allowed_cidrs: ["0.0.0.0/0", "::/0"] })),
    );
    const res = await t.request("/v1/account", { key: made.key });
    expect(res.status).toBe(403);
    expect((await json<Err>(res)).error.code).toBe("address_not_allowed");
  });
});
