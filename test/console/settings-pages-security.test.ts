import { describe, expect, test } from "bun:test";
import { consoleApp, PASSWORD } from "./helpers.ts";

type App = Awaited<ReturnType<typeof consoleApp>>;

const PAGES = ["/console/settings", "/console/settings/security"];

/** Every state-changing settings route, with a form that would change something. */
function actions(ids: { bob: string; otherSession: string }) {
  const list: { path: string; form: Record<string, string> }[] = [
    { path: "/console/settings/members/invite", form: { email: "eve@example.com", role: "owner" } },
    { path: `/console/settings/members/${ids.bob}/role`, form: { role: "owner" } },
    { path: `/console/settings/members/${ids.bob}/remove`, form: { confirm: "yes" } },
    { path: "/console/settings/webhook-secret/reveal", form: {} },
    { path: "/console/settings/webhook-secret/rotate", form: { confirm: "yes" } },
    { path: "/console/settings/alert-threshold", form: { threshold: "99" } },
    {
      path: "/console/settings/security/password",
      form: { current_password: PASSWORD, new_password: "another long password" },
    },
    { path: "/console/settings/security/two-factor/begin", form: {} },
    { path: "/console/settings/security/two-factor/enable", form: { code: "123456" } },
    { path: "/console/settings/security/two-factor/cancel", form: {} },
    { path: "/console/settings/security/two-factor/disable", form: { password: PASSWORD } },
    { path: `/console/settings/security/sessions/${ids.otherSession}/revoke`, form: {} },
    { path: "/console/settings/security/sessions/revoke-others", form: {} },
    { path: "/console/settings/security/sessions/revoke-all", form: {} },
  ];
  return list;
}

/** Everything the settings actions could change, to compare before and after a refused request. */
async function snapshot(c: App) {
  const ann = (await c.people.members.findPerson("ann@example.com"))!;
  return JSON.stringify({
    members: await c.people.members.listMembers(c.account.id),
    invites: (await c.people.invites.listInvites()).length,
    secret: await c.ctx.webhookSecrets.signingSecrets(c.account.id),
    threshold: String(await c.ctx.accounts.getAlertThreshold(c.account.id)),
    password: ann.password_hash,
    totp: [ann.totp_secret, ann.totp_enabled_at === null],
    sessions: (await c.people.sessions.listSessions(ann.id)).map((s) => s.id),
  });
}

/** Ann (owner) and Bob (member) of the default account; Ann signed in twice. */
async function world() {
  const c = await consoleApp();
  await c.person("ann@example.com", "owner");
  await c.person("bob@example.com", "member");
  const ann = await c.signedIn("ann@example.com");
  await ann.page("/console/settings");
  const other = await c.signedIn("ann@example.com");
  await c.ctx.webhookSecrets.get(c.account.id);
  const ids = {
    bob: (await c.people.members.findPerson("bob@example.com"))!.id,
    otherSession: (await c.people.sessions.resolveSession(other.cookie!))!.sessionId,
  };
  return { c, ann, ids };
}

describe("settings security: signed out", () => {
  test("every page is a 303 to sign-in, every action a 303 to sign-in, and nothing changes", async () => {
    const { c, ids } = await world();
    for (const path of PAGES) {
      const res = await c.handle(path);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/console/login?next=${encodeURIComponent(path)}`);
    }
    const before = await snapshot(c);
    const anon = c.browser();
    for (const a of actions(ids)) {
      const res = await anon.post(a.path, a.form, { csrf: null });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/console/login");
    }
    expect(await snapshot(c)).toBe(before);
  });
});

describe("settings security: CSRF and Origin", () => {
  test("every action without the session's token is 403 and changes nothing", async () => {
    const { c, ann, ids } = await world();
    const before = await snapshot(c);
    for (const a of actions(ids)) {
      for (const csrf of [null, "forged-token-forged-token-forged-token-xx"]) {
        const res = await ann.post(a.path, a.form, { csrf });
        expect(res.status).toBe(403);
        expect(await res.text()).toContain("nothing was changed");
      }
    }
    expect(await snapshot(c)).toBe(before);
    expect(await c.people.sessions.resolveSession(ann.cookie!)).not.toBeNull();
  });

  test("every action from another origin is 403 even with the token, and changes nothing", async () => {
    const { c, ann, ids } = await world();
    const before = await snapshot(c);
    for (const a of actions(ids)) {
      for (const origin of ["https://evil.example", "null"]) {
        const res = await ann.post(a.path, a.form, { origin });
        expect(res.status).toBe(403);
      }
      const noOrigin = await ann.post(a.path, a.form, { origin: null });
      expect(noOrigin.status).toBe(403);
    }
    expect(await snapshot(c)).toBe(before);
  });
});

describe("settings security: roles and other accounts", () => {
  test("a member is refused every owner action (403) and nothing changes", async () => {
    const { c, ids } = await world();
    const bob = await c.signedIn("bob@example.com");
    await bob.page("/console/settings");
    const annId = (await c.people.members.findPerson("ann@example.com"))!.id;
    const before = await snapshot(c);
    for (const [path, form] of [
      ["/console/settings/members/invite", { email: "eve@example.com", role: "member" }],
      [`/console/settings/members/${annId}/remove`, { confirm: "yes" }],
      [`/console/settings/members/${annId}/role`, { role: "member" }],
      [`/console/settings/members/${ids.bob}/role`, { role: "owner" }],
      ["/console/settings/webhook-secret/reveal", {}],
      ["/console/settings/webhook-secret/rotate", { confirm: "yes" }],
      ["/console/settings/alert-threshold", { threshold: "5" }],
    ] as const) {
      const res = await bob.post(path, form);
      expect(res.status).toBe(403);
      const text = await res.text();
      expect(text).toContain("Only an owner of this account can do this.");
      expect(text).not.toContain("whsec_");
    }
    expect(await snapshot(c)).toBe(before);
    expect((await c.people.members.listMembers(c.account.id)).find((m) => m.personId === ids.bob)?.role).toBe(
      "member",
    );
  });

  test("a member of another account is 404 for remove and role change; nothing changes", async () => {
    const { c, ann } = await world();
    const other = await c.ctx.accounts.createAccount("other", "USD");
    const { url } = await c.people.invites.createInvite({
      email: "zed@example.com",
      accountId: other.account.id,
      role: "member",
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const zed = (await c.people.members.findPerson("zed@example.com"))!.id;
    for (const [path, form] of [
      [`/console/settings/members/${zed}/remove`, { confirm: "yes" }],
      [`/console/settings/members/${zed}/remove`, {}],
      [`/console/settings/members/${zed}/role`, { role: "owner" }],
      ["/console/settings/members/nobody_here/remove", { confirm: "yes" }],
      ["/console/settings/members/..%2F..%2Fx/role", { role: "owner" }],
    ] as const) {
      const res = await ann.post(path, form);
      expect(res.status).toBe(404);
    }
    expect(await c.people.members.listMembers(other.account.id)).toEqual([
      expect.objectContaining({ personId: zed, role: "member" }),
    ]);
  });

  test("revoking another person's session is 404 and it stays alive", async () => {
    const { c, ann } = await world();
    const bob = await c.signedIn("bob@example.com");
    const bobSession = (await c.people.sessions.resolveSession(bob.cookie!))!.sessionId;
    const res = await ann.post(`/console/settings/security/sessions/${bobSession}/revoke`, {});
    expect(res.status).toBe(404);
    expect(await c.people.sessions.resolveSession(bob.cookie!)).not.toBeNull();
    const unknown = await ann.post("/console/settings/security/sessions/sess_nope/revoke", {});
    expect(unknown.status).toBe(404);
  });

  test("the last owner cannot demote or remove themselves: the service's message, 409, nothing changes", async () => {
    const { c, ann } = await world();
    const annId = (await c.people.members.findPerson("ann@example.com"))!.id;
    const demote = await ann.post(`/console/settings/members/${annId}/role`, { role: "member" });
    expect(demote.status).toBe(409);
    expect(await demote.text()).toContain("An account keeps at least one owner.");
    const remove = await ann.post(`/console/settings/members/${annId}/remove`, { confirm: "yes" });
    expect(remove.status).toBe(409);
    expect(await remove.text()).toContain("An account keeps at least one owner.");
    expect((await c.people.members.listMembers(c.account.id)).find((m) => m.personId === annId)?.role).toBe(
      "owner",
    );
  });
});

describe("settings security: what the HTML holds", () => {
  test("the webhook secret is not in the page until revealed, and not in it afterwards", async () => {
    const { c, ann } = await world();
    const secret = await c.ctx.webhookSecrets.get(c.account.id);
    const secretBody = secret.slice("whsec_".length);
    for (const path of PAGES) {
      const { text } = await ann.page(path);
      expect(text).not.toContain(secretBody);
      expect(text).not.toContain("whsec_");
    }
    const revealed = await ann.post("/console/settings/webhook-secret/reveal", {});
    expect(await revealed.text()).toContain(secret);
    expect(revealed.headers.get("cache-control")).toBe("no-store");
    expect((await ann.page("/console/settings")).text).not.toContain(secretBody);
  });

  test("a reveal is a POST: GET on the action paths is a 404 page, not the secret", async () => {
    const { c, ann } = await world();
    const secret = await c.ctx.webhookSecrets.get(c.account.id);
    const res = await ann.get("/console/settings/webhook-secret/reveal");
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain(secret);
  });

  test("a member email and a user agent holding markup show as text", async () => {
    const { c, ann } = await world();
    const evil = "<script>alert(1)</script>@example.com";
    const { url } = await c.people.invites.createInvite({
      email: evil,
      accountId: c.account.id,
      role: "member",
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    await c.people.signIn.signIn(
      { email: "ann@example.com", password: PASSWORD },
      { ip: "198.51.100.1", userAgent: '<img src=x onerror="alert(2)">' },
    );
    const members = (await ann.page("/console/settings")).text;
    expect(members).not.toContain("<script>alert(1)</script>");
    expect(members).toContain("&lt;script&gt;alert(1)&lt;/script&gt;@example.com");
    const sessions = (await ann.page("/console/settings/security")).text;
    expect(sessions).not.toContain("<img src=x");
    expect(sessions).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
    // The invite form echoes the email it was given as text too.
    const invited = await ann.post("/console/settings/members/invite", {
      email: "<b>x</b>@example.com",
      role: "member",
    });
    const text =
      invited.status === 303 ? (await ann.page(invited.headers.get("location")!)).text : await invited.text();
    expect(text).not.toContain("<b>x</b>");
    expect(text).toContain("&lt;b&gt;x&lt;/b&gt;@example.com");
  });

  test("an invalid role or a bad email is a 400 page, nothing is made", async () => {
    const { c, ann } = await world();
    const before = (await c.people.invites.listInvites()).length;
    const role = await ann.post("/console/settings/members/invite", {
      email: "eve@example.com",
      role: "admin",
    });
    expect(role.status).toBe(400);
    const email = await ann.post("/console/settings/members/invite", {
      email: "not an email",
      role: "member",
    });
    expect(email.status).toBe(400);
    expect(await email.text()).toContain("Enter a valid email address.");
    expect((await c.people.invites.listInvites()).length).toBe(before);
  });
});
