/**
 * Key controls through the API (docs/api.md "Keys"): expires_at, allowed_models, allowed_cidrs,
 * name and disabled are stored, shown by GET /v1/keys and enforced from the next request on.
 */
import { describe, expect, test } from "bun:test";
import { parseCidr } from "../../src/lib/addresses.ts";
import { json, makeTestApp } from "../helpers/context.ts";

type Key = Record<string, unknown> & { id: string; key: string };
type Err = { error: { code: string; message: string; param?: string } };
const send = (method: string, body: unknown, key?: string) => ({
  method,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
  ...(key ? { key } : {}),
});
const FUTURE = "2099-01-31T10:00:00Z";

/** An app whose requests come from `peer.address` (the socket's peer, changeable per test). */
async function app() {
  const peer = { address: "203.0.113.7" };
  const t = await makeTestApp({ peers: { requestIP: () => ({ address: peer.address }) } });
  const create = async (body: unknown) => {
    const res = await t.request("/v1/keys", send("POST", body));
    expect(res.status).toBe(201);
    return await json<Key>(res);
  };
  const patch = (id: string, body: unknown) => t.request(`/v1/keys/${id}`, send("PATCH", body));
  return { t, peer, create, patch };
}

describe("creating and changing a key's controls", () => {
  test("create with every control; GET /v1/keys shows them", async () => {
    const { t, create } = await app();
    const made = await create({
      name: "ci",
      monthly_limit_micro: "5000000",
      expires_at: "2099-01-31T13:00:00+03:00",
      allowed_models: ["sandbox/image", "sandbox/*", "sandbox/image"],
      allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.9", "::ffff:192.0.2.0/120"],
    });
    const expected = {
      name: "ci",
      expires_at: FUTURE,
      disabled: false,
      allowed_models: ["sandbox/image", "sandbox/*"],
      allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.9/32", "192.0.2.0/24"],
    };
    expect(made).toMatchObject(expected);
    const list = await json<{ data: Key[] }>(await t.request("/v1/keys"));
    expect(list.data.find((k) => k.id === made.id)).toMatchObject(expected);
    // The Default key has none.
    expect(list.data[0]).toMatchObject({
      expires_at: null,
      disabled: false,
      allowed_models: null,
      allowed_cidrs: null,
    });
  });

  test("PATCH renames, sets and clears each control; unsent fields stay", async () => {
    const { create, patch } = await app();
    const made = await create({ name: "a", allowed_models: ["sandbox/image"] });
    let res = await patch(made.id, { name: "b", expires_at: FUTURE, allowed_cidrs: ["10.0.0.0/8"] });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      name: "b",
      expires_at: FUTURE,
      allowed_models: ["sandbox/image"],
      allowed_cidrs: ["10.0.0.0/8"],
    });
    res = await patch(made.id, { expires_at: null, allowed_models: null, allowed_cidrs: null });
    expect(await json(res)).toMatchObject({
      name: "b",
      expires_at: null,
      allowed_models: null,
      allowed_cidrs: null,
    });
  });
});

describe("enforcement, from the next request on", () => {
  test("a disabled key is 401 saying so; enabled again it works", async () => {
    const { t, create, patch } = await app();
    const made = await create({ name: "d" });
    expect((await t.request("/v1/models", { key: made.key })).status).toBe(200);
    expect((await json(await patch(made.id, { disabled: true }))).disabled).toBe(true);
    const res = await t.request("/v1/estimate", send("POST", { model_id: "sandbox/image" }, made.key));
    expect(res.status).toBe(401);
    const body = await json<Err>(res);
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toContain("disabled");
    expect((await json(await patch(made.id, { disabled: false }))).disabled).toBe(false);
    const again = await t.request("/v1/estimate", send("POST", { model_id: "sandbox/image" }, made.key));
    expect(again.status).toBe(200);
  });

  test("a key past expires_at is 401 saying it expired, and when", async () => {
    const { t, create } = await app();
    const made = await create({ name: "e", expires_at: FUTURE });
    const ok = await t.request("/v1/estimate", send("POST", { model_id: "sandbox/image" }, made.key));
    expect(ok.status).toBe(200);
    // The clock cannot be moved inside the server; the stored expiry is moved to the past instead.
    await t.ctx.sql.run("UPDATE api_keys SET expires_at = ? WHERE id = ?", [
      Math.floor(Date.now() / 1000) - 1,
      made.id,
    ]);
    t.ctx.accounts.invalidatePrincipals();
    const res = await t.request("/v1/estimate", send("POST", { model_id: "sandbox/image" }, made.key));
    expect(res.status).toBe(401);
    const body = await json<Err>(res);
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toMatch(/expired at \d{4}-\d{2}-\d{2}T/);
  });

  test("allowed_models: exact ids and prefixes pass, others are 403 model_not_allowed", async () => {
    const { t, create } = await app();
    const made = await create({ name: "m", allowed_models: ["sandbox/image", "sandbox/sp*"] });
    const estimate = (model_id: string) =>
      t.request("/v1/estimate", send("POST", { model_id, input: { text: "hi" } }, made.key));
    expect((await estimate("sandbox/image")).status).toBe(200);
    expect((await estimate("sandbox/speech")).status).toBe(200);
    for (const refused of ["sandbox/video", "sandbox/imagex", "nope/unknown"]) {
      const res = await estimate(refused);
      expect(res.status).toBe(403);
      const body = await json<Err>(res);
      expect(body.error.code).toBe("model_not_allowed");
      expect(body.error.param).toBe("model_id");
    }
  });

  test("allowed_cidrs: IPv4 and IPv6 peers inside pass, outside are 403 address_not_allowed", async () => {
    const { t, peer, create } = await app();
    const made = await create({ name: "c", allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"] });
    const call = () => t.request("/v1/account", { key: made.key });
    for (const inside of ["203.0.113.7", "::ffff:203.0.113.200", "2001:db8::1"]) {
      peer.address = inside;
      expect((await call()).status).toBe(200);
    }
    for (const outside of ["198.51.100.1", "2001:db9::1", "127.0.0.1"]) {
      peer.address = outside;
      const res = await call();
      expect(res.status).toBe(403);
      const body = await json<Err>(res);
      expect(body.error.code).toBe("address_not_allowed");
      expect(body.error.message).toContain(outside);
    }
  });

  test("behind a trusted proxy the X-Forwarded-For client is checked, else the peer", async () => {
    const { t, peer, create } = await app();
    const made = await create({ name: "p", allowed_cidrs: ["198.51.100.0/24"] });
    const call = (xff: string) =>
      t.request("/v1/account", { key: made.key, headers: { "x-forwarded-for": xff } });
    peer.address = "127.0.0.1";
    // Not trusted: the header is not believed, the peer is outside.
    expect((await call("198.51.100.5")).status).toBe(403);
    t.ctx.live.trustedProxies = [parseCidr("127.0.0.0/8")];
    expect((await call("198.51.100.5")).status).toBe(200);
    expect((await call("203.0.113.5")).status).toBe(403);
    // A client cannot put an allowed address in front of its own: the nearest untrusted hop counts.
    expect((await call("198.51.100.5, 203.0.113.5")).status).toBe(403);
  });
});
