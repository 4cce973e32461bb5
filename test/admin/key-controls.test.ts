/** The operator sets any key's controls: POST /admin/v1/accounts/{id}/keys and PATCH /admin/v1/keys/{id}. */
import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

type Key = Record<string, unknown> & { id: string; key_id: string; key: string };

describe("operator key controls", () => {
  test("create with controls, list them, disable and enable, change the lists", async () => {
    const t = await makeTestApp();
    const created = await json<Key>(
      await t.request(
        `/admin/v1/accounts/${t.account.id}/keys`,
        admin("POST", {
          name: "ci",
          expires_at: "2099-06-01T00:00:00Z",
          allowed_models: ["sandbox/*"],
          allowed_cidrs: ["2001:db8::/32"],
        }),
      ),
    );
    const controls = {
      expires_at: "2099-06-01T00:00:00Z",
      disabled: false,
      allowed_models: ["sandbox/*"],
      allowed_cidrs: ["2001:db8::/32"],
    };
    expect(created).toMatchObject(controls);
    const list = await json<{ data: Key[] }>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("GET")),
    );
    expect(list.data[1]).toMatchObject(controls);

    // Another account's key, changed by the operator; the account's own key sees it.
    const plain = await json<Key>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("POST", {})),
    );
    const estimate = () =>
      t.request("/v1/estimate", {
        method: "POST",
        key: plain.key,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image" }),
      });
    expect((await estimate()).status).toBe(200);
    let res = await t.request(
      `/admin/v1/keys/${plain.key_id}`,
      admin("PATCH", { disabled: true, name: "off" }),
    );
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ name: "off", disabled: true, account_id: t.account.id });
    expect((await estimate()).status).toBe(401);
    res = await t.request(
      `/admin/v1/keys/${plain.key_id}`,
      admin("PATCH", { disabled: false, allowed_models: ["sandbox/video"] }),
    );
    expect(await json(res)).toMatchObject({ disabled: false, allowed_models: ["sandbox/video"] });
    const refused = await estimate();
    expect(refused.status).toBe(403);
    expect((await json<Err>(refused)).error.code).toBe("model_not_allowed");
  });

  test("errors: an unknown key is 404, bad controls 400, a revoked key 409", async () => {
    const t = await makeTestApp();
    expect((await t.request("/admin/v1/keys/key_unknown00", admin("PATCH", { disabled: true }))).status).toBe(
      404,
    );
    const bad = await t.request(`/admin/v1/keys/${t.keyId}`, admin("PATCH", { allowed_cidrs: ["nope"] }));
    expect(bad.status).toBe(400);
    expect((await json<Err>(bad)).error.param).toBe("allowed_cidrs");
    const badCreate = await t.request(
      `/admin/v1/accounts/${t.account.id}/keys`,
      admin("POST", { expires_at: "yesterday" }),
    );
    expect(badCreate.status).toBe(400);
    const made = await json<Key>(
      await t.request(`/admin/v1/accounts/${t.account.id}/keys`, admin("POST", {})),
    );
    await t.request(`/admin/v1/keys/${made.key_id}`, admin("DELETE"));
    expect(
      (await t.request(`/admin/v1/keys/${made.key_id}`, admin("PATCH", { disabled: true }))).status,
    ).toBe(409);
  });
});
