/**
 * The operator disables and enables an account or a person through the admin API: a disabled
 * account's keys are 401 at once (the message says so) and its sessions end; a disabled person
 * cannot sign in and every session of theirs ends, in every account. Enabling undoes both.
 */
import { describe, expect, test } from "bun:test";
import { consoleApp, PASSWORD } from "../console/helpers.ts";
import { json } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

type AccountView = { id: string; disabled_at: string | null; disabled_reason: string | null };
type PersonView = { id: string; email: string; disabled_at: string | null; disabled_reason: string | null };

async function setup() {
  const c = await consoleApp();
  await c.ctx.ledger.topUp(c.account.id, 10_000_000n, null);
  const estimate = (key = c.key) =>
    c.request("/v1/estimate", {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_id: "sandbox/image" }),
    });
  return { c, estimate };
}

describe("disable an account", () => {
  test("its keys are 401 at once with the reason why, its sessions end; enabling restores both", async () => {
    const { c, estimate } = await setup();
    await c.person("ann@example.com", "owner");
    const ann = await c.signedIn("ann@example.com");
    expect((await ann.page("/console/keys")).status).toBe(200);
    expect((await estimate()).status).toBe(200);

    let res = await c.request(
      `/admin/v1/accounts/${c.account.id}/disable`,
      admin("POST", { reason: "  chargeback  " }),
    );
    expect(res.status).toBe(200);
    const off = await json<AccountView>(res);
    expect(off.disabled_at).not.toBeNull();
    expect(off.disabled_reason).toBe("chargeback");

    const refused = await estimate();
    expect(refused.status).toBe(401);
    const err = await json<Err>(refused);
    expect(err.error.code).toBe("unauthorized");
    expect(err.error.message).toContain("account is disabled");
    // The operator's reason is never shown to the key's holder.
    expect(err.error.message).not.toContain("chargeback");

    // Ann's session looked at the account: it ended (the page is a 303 to sign-in)...
    res = await ann.get("/console/keys");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/console/login");
    // ...and signing in again lands on no account (her only one is disabled).
    const again = await c.signedIn("ann@example.com");
    expect((await again.page("/console/keys")).status).toBe(403);
    expect((await again.page("/console/studio")).status).toBe(403);

    // Shown to the operator (GET and the list).
    const shown = await json<AccountView>(
      await c.request(`/admin/v1/accounts/${c.account.id}`, admin("GET")),
    );
    expect(shown.disabled_reason).toBe("chargeback");
    const list = await json<{ data: AccountView[] }>(await c.request("/admin/v1/accounts", admin("GET")));
    expect(list.data.find((a) => a.id === c.account.id)!.disabled_at).toBe(off.disabled_at);

    res = await c.request(`/admin/v1/accounts/${c.account.id}/enable`, admin("POST"));
    expect(res.status).toBe(200);
    expect(await json<AccountView>(res)).toMatchObject({ disabled_at: null, disabled_reason: null });
    expect((await estimate()).status).toBe(200);
    expect((await again.page("/console/keys")).status).toBe(200);
  });

  test("another account is untouched; a person in both keeps the other", async () => {
    const { c, estimate } = await setup();
    const other = await json<{ account: { id: string }; key: string }>(
      await c.request("/admin/v1/accounts", admin("POST", { name: "Other" })),
    );
    await c.person("bo@example.com", "owner");
    const { url } = await c.people.invites.createInvite({
      email: "bo@example.com",
      accountId: other.account.id,
      role: "member",
      operator: false,
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const bo = await c.signedIn("bo@example.com");
    expect(
      (await c.request(`/admin/v1/accounts/${c.account.id}/disable`, admin("POST", { reason: "x" }))).status,
    ).toBe(200);
    expect((await estimate(other.key)).status).toBe(200);
    // Bo's session was on the disabled account: signed out; signing in lands on the other one.
    expect((await bo.get("/console")).status).toBe(303);
    const again = await c.signedIn("bo@example.com");
    const page = await again.page("/console/settings");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Other");
    // The disabled account cannot be switched to.
    const res = await again.post("/console/account", { account: c.account.id });
    expect(res.status).toBe(404);
  });
});

describe("disable a person", () => {
  test("cannot sign in, every session ends; enabled again signs in", async () => {
    const { c } = await setup();
    await c.person("cy@example.com", "owner");
    const cy = await c.signedIn("cy@example.com");
    const cy2 = await c.signedIn("cy@example.com");
    const id = (await c.people.members.findPerson("cy@example.com"))!.id;

    let res = await c.request(`/admin/v1/people/${id}/disable`, admin("POST", { reason: "left" }));
    expect(res.status).toBe(200);
    const off = await json<PersonView>(res);
    expect(off).toMatchObject({ email: "cy@example.com", disabled_reason: "left" });
    expect(off.disabled_at).not.toBeNull();
    for (const b of [cy, cy2]) expect((await b.get("/console")).status).toBe(303);

    res = await c.browser().post("/console/login", { email: "cy@example.com", password: PASSWORD });
    expect(res.status).toBe(401);
    // The account and its keys are untouched.
    const estimate = await c.request("/v1/estimate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_id: "sandbox/image" }),
    });
    expect(estimate.status).toBe(200);

    res = await c.request(`/admin/v1/people/${id}/enable`, admin("POST"));
    expect(await json<PersonView>(res)).toMatchObject({ disabled_at: null, disabled_reason: null });
    expect((await (await c.signedIn("cy@example.com")).page("/console")).status).toBe(200);
  });
});
