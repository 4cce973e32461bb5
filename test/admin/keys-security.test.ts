import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Key } from "./helpers.ts";

describe("operator key management: security", () => {
  test("the key routes need the admin token; an API key (even a manage key) is 401", async () => {
    const t = await makeTestApp();
    for (const [method, path] of [
      ["GET", `/admin/v1/accounts/${t.account.id}`],
      ["GET", `/admin/v1/accounts/${t.account.id}/keys`],
      ["DELETE", `/admin/v1/keys/${t.keyId}`],
      ["PATCH", `/admin/v1/keys/${t.keyId}`],
    ] as const) {
      expect((await t.request(path, admin(method, undefined, null))).status).toBe(401);
      expect((await t.request(path, admin(method, undefined, "gat_wrong"))).status).toBe(401);
      expect(
        (await t.request(path, { method, headers: { authorization: `Bearer ${t.key}` }, key: null })).status,
      ).toBe(401);
    }
    expect((await t.ctx.accounts.findKey(t.keyId))!.revoked_at).toBeNull();
    expect((await t.ctx.accounts.findKey(t.keyId))!.disabled_at).toBeNull();
  });

  test("an account's key list holds only its own keys", async () => {
    const t = await makeTestApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const mine = await json<{ data: Key[] }>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("GET")),
    );
    const theirs = await json<{ data: Key[] }>(
      await t.request(`/admin/v1/accounts/${other.account.id}/keys`, admin("GET")),
    );
    expect(mine.data.map((k) => k.id)).toEqual([t.keyId]);
    expect(theirs.data.map((k) => k.id)).toEqual([other.keyId]);
  });

  test("a client cannot revoke another account's key: 404, and the key keeps working", async () => {
    const t = await makeTestApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const extra = await t.ctx.accounts.createKey(other.account.id, { name: "extra" });
    for (const id of [other.keyId, extra.keyId]) {
      const res = await t.request(`/v1/keys/${id}`, { method: "DELETE" });
      expect(res.status).toBe(404);
      expect((await json<{ error: { code: string } }>(res)).error.code).toBe("not_found");
      const patch = await t.request(`/v1/keys/${id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "stolen" }),
      });
      expect(patch.status).toBe(404);
    }
    expect((await t.request("/v1/account", { key: other.key })).status).toBe(200);
    expect((await t.request("/v1/account", { key: extra.key })).status).toBe(200);
    expect((await t.ctx.accounts.findKey(extra.keyId))!.name).toBe("extra");
  });

  test("the operator revokes by key id alone; the answer names the key's own account", async () => {
    const t = await makeTestApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const res = await t.request(`/admin/v1/keys/${other.keyId}`, admin("DELETE"));
    expect((await json<Key>(res)).account_id).toBe(other.account.id);
    expect((await t.request("/v1/account", { key: other.key })).status).toBe(401);
    expect((await t.request("/v1/account")).status).toBe(200);
  });
});
