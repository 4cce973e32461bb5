/**
 * The operator pages of issue 34, through their forms: Create account (post/redirect/get, the
 * Default key and the owner's invite shown once), an account's keys and Revoke, Disable / Enable
 * account and person, and Requests across accounts with its filters and paging.
 */
import { describe, expect, test } from "bun:test";
import { json } from "../helpers/context.ts";
import { PASSWORD } from "./helpers.ts";
import { operatorSetup as setup } from "./operators-setup.ts";

const newKeyOf = (text: string) => /id="new-key"[^>]*value="([^"]+)"/.exec(text)?.[1] ?? null;
const inviteOf = (text: string) => /id="invite-link"[^>]*value="([^"]+)"/.exec(text)?.[1] ?? null;

describe("Create account", () => {
  test("redirects to the new account, shows its Default key and the owner's invite once", async () => {
    const { c, op } = await setup();
    const res = await op.post("/console/admin/accounts", {
      name: "Acme",
      currency: "RUB",
      email: "Boss@Example.com",
    });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/console\/admin\/accounts\/acct_[0-9A-Za-z]+\?done=created$/);
    const page = await op.page(location);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Acme");
    expect(page.text).toContain("RUB");
    const key = newKeyOf(page.text)!;
    expect(key).toBeTruthy();
    expect((await c.request("/v1/account", { key })).status).toBe(200);
    const invite = inviteOf(page.text)!;
    expect(invite).toContain("/console/invite/");
    expect(page.text).toContain("boss@example.com");
    // Reloading shows neither again and creates nothing.
    const again = await op.page(location);
    expect(newKeyOf(again.text)).toBeNull();
    expect(inviteOf(again.text)).toBeNull();
    expect(again.text).toContain("shown once");
    expect((await c.ctx.accounts.searchAccounts("Acme", 10)).length).toBe(1);
    // The invite makes Boss the owner of Acme.
    const accountId = location.split("/").pop()!.split("?")[0]!;
    const accepted = await c.people.signIn.acceptInvite(invite.split("/").pop()!, PASSWORD, {
      ip: null,
      userAgent: null,
    });
    expect(accepted.session.session).toMatchObject({ accountId, role: "owner" });
  });
});

describe("an account's keys", () => {
  test("listed with state and limits; Revoke asks first, then the key is 401 at once", async () => {
    const { c, op, estimate } = await setup();
    const made = await c.ctx.accounts.createKey(c.account.id, {
      name: "ci",
      monthlyLimitMicro: 5_000_000n,
      allowedModels: ["sandbox/*"],
    });
    const page = await op.page(`/console/admin/accounts/${c.account.id}`);
    expect(page.text).toContain(`data-key="${made.keyId}"`);
    expect(page.text).toContain("sandbox/*");
    expect(page.text).toContain("a month");
    const confirm = await op.page(`/console/admin/accounts/${c.account.id}/keys/${made.keyId}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("Revoke key");
    expect((await estimate(made.key)).status).toBe(200);
    const res = await op.post(`/console/admin/accounts/${c.account.id}/keys/${made.keyId}/revoke`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/admin/accounts/${c.account.id}?done=revoked`);
    expect((await estimate(made.key)).status).toBe(401);
    const after = await op.page(res.headers.get("location")!);
    expect(after.text).toContain("The key is revoked");
    expect(after.text).toMatch(new RegExp(`data-key="${made.keyId}"[\\s\\S]*?revoked`));
  });
});

describe("Disable account", () => {
  test("a reason is required (form kept); disabled: keys 401, owner signed out; Enable restores", async () => {
    const { c, op, estimate } = await setup();
    await c.person("ann@example.com", "owner");
    const ann = await c.signedIn("ann@example.com");
    let res = await op.post(`/console/admin/accounts/${c.account.id}/disable`, { reason: "   " });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("needs a reason");
    expect((await estimate(c.key)).status).toBe(200);

    res = await op.post(`/console/admin/accounts/${c.account.id}/disable`, { reason: "unpaid invoice" });
    expect(res.status).toBe(303);
    const page = await op.page(res.headers.get("location")!);
    expect(page.text).toContain("unpaid invoice");
    expect(page.text).toContain("Enable account");
    expect((await op.page("/console/admin")).text).toContain("(disabled)");
    const refused = await estimate(c.key);
    expect(refused.status).toBe(401);
    expect((await json<{ error: { message: string } }>(refused)).error.message).toContain(
      "account is disabled",
    );
    expect((await ann.get("/console")).status).toBe(303);

    res = await op.post(`/console/admin/accounts/${c.account.id}/enable`, {});
    expect(res.status).toBe(303);
    expect((await estimate(c.key)).status).toBe(200);
  });
});

describe("Disable a person", () => {
  test("from People: signed out at once, cannot sign in; Enable; never oneself", async () => {
    const { c, op } = await setup();
    await c.person("cy@example.com", "member");
    const cy = await c.signedIn("cy@example.com");
    const id = (await c.people.members.findPerson("cy@example.com"))!.id;
    const people = await op.page("/console/admin/people");
    expect(people.text).toContain(`/console/admin/people/${id}/disable`);
    let res = await op.post(`/console/admin/people/${id}/disable`, { reason: "" });
    expect(res.status).toBe(400);
    res = await op.post(`/console/admin/people/${id}/disable`, { reason: "left the company" });
    expect(res.status).toBe(303);
    expect((await cy.get("/console")).status).toBe(303);
    expect(
      (await c.browser().post("/console/login", { email: "cy@example.com", password: PASSWORD })).status,
    ).toBe(401);
    expect((await op.page("/console/admin/people")).text).toContain("left the company");
    res = await op.post(`/console/admin/people/${id}/enable`, {});
    expect(res.status).toBe(303);
    expect((await (await c.signedIn("cy@example.com")).page("/console")).status).toBe(200);

    const me = (await c.people.members.findPerson("op@example.com"))!.id;
    res = await op.post(`/console/admin/people/${me}/disable`, { reason: "oops" });
    expect(res.status).toBe(409);
    expect((await op.page("/console/admin")).status).toBe(200);
  });
});

describe("Requests across accounts", () => {
  test("newest first with the account, filters, paging and any account's detail", async () => {
    const { c, op, submit } = await setup();
    const other = await c.ctx.accounts.createAccount("Other Co", "USD");
    await c.ctx.ledger.topUp(other.account.id, 10_000_000n, null);
    const mine = await submit(c.key);
    const theirs = await submit(other.key, { prompt: "their prompt" });
    const video = await submit(other.key, { prompt: "v", duration: 1 }, "sandbox/video");

    const list = await op.page("/console/admin/requests");
    expect(list.status).toBe(200);
    const order = [video, theirs, mine].map((id) => list.text.indexOf(id));
    expect(order.every((i) => i > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(list.text).toContain("Other Co");
    expect(list.text).toContain(`/console/admin/accounts/${other.account.id}`);

    const has = async (query: string, ids: string[], not: string[]) => {
      const p = await op.page(`/console/admin/requests?${query}`);
      expect([query, p.status]).toEqual([query, 200]);
      for (const id of ids) expect([query, p.text.includes(id)]).toEqual([query, true]);
      for (const id of not) expect([query, p.text.includes(id)]).toEqual([query, false]);
    };
    await has(`account=${other.account.id}`, [theirs, video], [mine]);
    await has("model=sandbox/video", [video], [mine, theirs]);
    await has(`key=${c.keyId}`, [mine], [theirs, video]);
    await has(`id=${theirs}`, [theirs], [mine, video]);
    await has("source=STUDIO", [], [mine, theirs, video]);
    const today = new Date().toISOString().slice(0, 10);
    await has(`from=${today}&to=${today}`, [mine, theirs, video], []);
    await has("from=2020-01-01&to=2020-01-02", [], [mine, theirs, video]);

    for (const bad of [
      "status=NOPE",
      "from=2026-02-30",
      "to=yesterday",
      "id=nope",
      "account=x",
      "from=2026-02-02&to=2026-02-01",
    ]) {
      const p = await op.page(`/console/admin/requests?${bad}`);
      expect([bad, p.status]).toEqual([bad, 400]);
      expect(p.text).toContain("Choose the filters again");
    }

    const detail = await op.page(`/console/admin/requests/${theirs}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain("their prompt");
    expect(detail.text).toContain("Other Co");
    expect((await op.page("/console/admin/requests/01900000-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await op.page("/console/admin/requests/nope")).status).toBe(404);
  });

  test("pages by cursor, 50 at a time, newest first", async () => {
    const { c, op } = await setup();
    const ids: string[] = [];
    const { key } = await c.ctx.accounts.createKey(c.account.id, { maxInFlight: 100, writesPerMinute: 1000 });
    for (let i = 0; i < 52; i++) {
      const r = await c.request("/v1/queue/sandbox/image", {
        method: "POST",
        key,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: `n${i}` }),
      });
      ids.push((await json(r)).request_id as string);
    }
    const first = await op.page("/console/admin/requests");
    const older = /href="(\/console\/admin\/requests\?cursor=[^"]+)"/.exec(first.text)![1]!;
    expect(first.text).toContain(ids[51]!);
    expect(first.text).not.toContain(ids[1]!);
    const second = await op.page(older.replaceAll("&amp;", "&"));
    expect(second.text).toContain(ids[0]!);
    expect(second.text).toContain(ids[1]!);
    expect(second.text).not.toContain(ids[51]!);
  });
});
