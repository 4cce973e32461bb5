import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Key } from "./helpers.ts";

describe("operator key management under /admin/v1", () => {
  test("show an account: balance, this month's spend and its keys", async () => {
    const t = await makeTestApp();
    await t.request(
      `/admin/v1/accounts/${t.account.id}/credit`,
      admin("POST", { amount: "3.5", reason: "r" }),
    );
    await t.request(
      `/admin/v1/accounts/${t.account.id}/keys`,
      admin("POST", { name: "ci", monthly_limit_micro: "2000000" }),
    );
    const res = await t.request(`/admin/v1/accounts/${t.account.id}`, admin("GET"));
    expect(res.status).toBe(200);
    const a = await json<Record<string, unknown> & { keys: Key[] }>(res);
    expect(a).toMatchObject({
      id: t.account.id,
      object: "account",
      name: "default",
      currency: "USD",
      balance_micro: "3500000",
      held_micro: "0",
      available_micro: "3500000",
      month_spent_micro: "0",
    });
    expect(a.month).toMatch(/^\d{4}-\d{2}$/);
    expect(a.keys.map((k) => [k.name, k.can_manage, k.monthly_limit_micro])).toEqual([
      ["Default", true, null],
      ["ci", false, "2000000"],
    ]);
    expect(JSON.stringify(a)).not.toContain(t.key); // a 10-character prefix, never the key itself
  });

  test("list an account's keys, revoke one: listed as revoked, refused on the next request", async () => {
    const t = await makeTestApp();
    const created = await json<{ key_id: string; key: string }>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("POST", { name: "ci" })),
    );
    expect((await t.request("/v1/account", { key: created.key })).status).toBe(200);

    const list = await json<{ data: Key[] }>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("GET")),
    );
    expect(list.data.map((k) => k.id)).toEqual([t.keyId, created.key_id]);
    expect(list.data.every((k) => k.revoked_at === null)).toBe(true);

    const res = await t.request(`/admin/v1/keys/${created.key_id}`, admin("DELETE"));
    expect(res.status).toBe(200);
    const revoked = await json<Key>(res);
    expect(revoked).toMatchObject({ id: created.key_id, name: "ci", account_id: t.account.id });
    expect(revoked.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    // The key was in the authentication cache a moment ago: it is refused all the same.
    const refused = await t.request("/v1/account", { key: created.key });
    expect(refused.status).toBe(401);
    expect((await json<{ error: { code: string } }>(refused)).error.code).toBe("unauthorized");
    // The other keys still work.
    expect((await t.request("/v1/account")).status).toBe(200);

    const after = await json<{ data: Key[] }>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("GET")),
    );
    expect(after.data.find((k) => k.id === created.key_id)!.revoked_at).toBe(revoked.revoked_at);

    // Revoking again is not an error and changes nothing.
    const again = await json<Key>(await t.request(`/admin/v1/keys/${created.key_id}`, admin("DELETE")));
    expect(again.revoked_at).toBe(revoked.revoked_at);
  });

  test("the operator may revoke an account's last manage key (a client may not), then issue a new one", async () => {
    const t = await makeTestApp();
    // The client itself is stopped at its last manage key ...
    const own = await t.request(`/v1/keys/${t.keyId}`, { method: "DELETE" });
    expect(own.status).toBe(409);
    // ... the operator is not: a leaked Default key must always be stoppable.
    const res = await t.request(`/admin/v1/keys/${t.keyId}`, admin("DELETE"));
    expect(res.status).toBe(200);
    expect((await t.request("/v1/account")).status).toBe(401);
    const fresh = await json<{ key: string; can_manage: boolean }>(
      await t.request(
        `/admin/v1/accounts/${t.account.id}/keys`,
        admin("POST", { name: "Default 2", can_manage: true }),
      ),
    );
    expect(fresh.can_manage).toBe(true);
    expect((await t.request("/v1/keys", { key: fresh.key })).status).toBe(200);
  });
});
